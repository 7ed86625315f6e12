/* Per-run launch costs under PoCL: 55 dependent kernels (MobileNetV2's count)
 * enqueued one by one, with aotc's flushes after launches 1, 2, 4, 8, ...,
 * against the same kernels replayed from a cl_khr_command_buffer recorded
 * once; and one kernel alone after the workers went idle (stop 48).
 *
 *   cc -O2 -o /tmp/command_buffer bench/cpu/command_buffer.c -lOpenCL
 *   /tmp/command_buffer [FMA_STEPS=200] [WORK_ITEMS=4096]
 *
 * Prints medians (and minima) of 200 runs, three alternated rounds. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double nowMs(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
static int cmp(const void*a,const void*b){double x=*(const double*)a,y=*(const double*)b;return x<y?-1:x>y;}
static const char *src =
"__kernel void k(__global const float *a, __global float *b, int reps) {\n"
"  size_t i = get_global_id(0);\n"
"  float16 v = vload16(i, a); float16 acc = v;\n"
"  for (int r = 0; r < reps; ++r) acc = fma(acc, (float16)(0.999f), v);\n"
"  vstore16(acc * 0.5f, i, b);\n}\n";
int main(int argc, char **argv) {
  int nk = 55, runs = 200, reps = argc > 1 ? atoi(argv[1]) : 200; size_t global = argc > 2 ? atoi(argv[2]) : 4096, local = 16;
  cl_platform_id p; cl_device_id d; cl_int e;
  clGetPlatformIDs(1,&p,0); clGetDeviceIDs(p,CL_DEVICE_TYPE_ALL,1,&d,0);
  cl_context ctx = clCreateContext(0,1,&d,0,0,&e);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx,d,0,&e);
  cl_program prog = clCreateProgramWithSource(ctx,1,&src,0,&e);
  if (clBuildProgram(prog,1,&d,"",0,0)) { fprintf(stderr,"build failed\n"); return 1; }
  cl_mem buf[2]; for (int i=0;i<2;++i) buf[i]=clCreateBuffer(ctx,CL_MEM_READ_WRITE,global*16*4,0,&e);
  float *h = calloc(global*16,4); clEnqueueWriteBuffer(q,buf[0],1,0,global*16*4,h,0,0,0); clEnqueueWriteBuffer(q,buf[1],1,0,global*16*4,h,0,0,0);
  cl_kernel ks[2]; for (int i=0;i<2;++i){ ks[i]=clCreateKernel(prog,"k",&e); clSetKernelArg(ks[i],0,sizeof(cl_mem),&buf[i]); clSetKernelArg(ks[i],1,sizeof(cl_mem),&buf[1-i]); clSetKernelArg(ks[i],2,sizeof(int),&reps);}
  clCreateCommandBufferKHR_fn create = (clCreateCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(p,"clCreateCommandBufferKHR");
  clCommandNDRangeKernelKHR_fn nd = (clCommandNDRangeKernelKHR_fn)clGetExtensionFunctionAddressForPlatform(p,"clCommandNDRangeKernelKHR");
  clFinalizeCommandBufferKHR_fn fin = (clFinalizeCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(p,"clFinalizeCommandBufferKHR");
  clEnqueueCommandBufferKHR_fn enq = (clEnqueueCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(p,"clEnqueueCommandBufferKHR");
  if (!create||!nd||!fin||!enq) { fprintf(stderr,"no command buffer entry points\n"); return 1; }
  cl_command_buffer_khr cb = create(1,&q,0,&e); if (e) { fprintf(stderr,"create %d\n",e); return 1; }
  cl_sync_point_khr sp = 0, prev = 0;
  for (int j=0;j<nk;++j){ e = nd(cb,0,0,ks[j%2],1,0,&global,&local,j?1:0,j?&prev:0,&sp,0); if(e){fprintf(stderr,"record %d\n",e);return 1;} prev=sp; }
  if ((e=fin(cb))) { fprintf(stderr,"finalize %d\n",e); return 1; }
  double *t = malloc(sizeof(double)*runs*2);
  // one kernel alone
  for (int r=0;r<runs;++r){ double a=nowMs(); clEnqueueNDRangeKernel(q,ks[0],1,0,&global,&local,0,0,0); clFinish(q); t[r]=nowMs()-a; }
  qsort(t,runs,sizeof(double),cmp); double one=t[runs/2];
  for (int round=0; round<3; ++round) {
    double *u=t, *c=t+runs;
    for (int r=0;r<runs;++r){
      double a=nowMs(); for(int j=0;j<nk;++j){ clEnqueueNDRangeKernel(q,ks[j%2],1,0,&global,&local,0,0,0); if((j&(j+1))==0) clFlush(q);} clFinish(q); u[r]=nowMs()-a;
      a=nowMs(); e=enq(1,&q,cb,0,0,0); clFinish(q); c[r]=nowMs()-a; if(e){fprintf(stderr,"enqueue cb %d\n",e);return 1;}
    }
    qsort(u,runs,sizeof(double),cmp); qsort(c,runs,sizeof(double),cmp);
    printf("one kernel %.3f ms; %d kernels: enqueued %.3f ms (min %.3f), command buffer %.3f ms (min %.3f); x%d kernel alone = %.3f\n", one, nk, u[runs/2], u[0], c[runs/2], c[0], nk, one*nk);
  }
  return 0;
}
