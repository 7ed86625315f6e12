/* What a persistent kernel saves under PoCL (stop 69): PHASES dependent
 * phases of TILES work-items each (a float16 FMA chain of REPS steps per
 * work-item, each reading its neighbour's output of the phase before), as
 * one launch per phase (aotc's flushes after launches 1, 2, 4, ...) against
 * one launch of GROUPS work-groups that claim each phase's work-items from
 * an atomic counter and wait for the phase's last one before the next
 * (compiler/schedule/persistent_kernels.h). Checks that both give the same
 * bits, then prints medians of 200 runs, three alternated rounds.
 *
 *   cc -O2 -o /tmp/persistent_probe bench/cpu/persistent_probe.c -lOpenCL
 *   /tmp/persistent_probe [REPS=100] [TILES=128] [GROUPS=2] [LOCAL=1]
 *
 * POCL_MAX_PTHREAD_COUNT=1 shows the persistent launch completing with one
 * worker thread (the work-groups run one after the other). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double nowMs(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
static int cmp(const void*a,const void*b){double x=*(const double*)a,y=*(const double*)b;return x<y?-1:x>y;}
static const char *src =
"void tile(__global const float *a, __global float *b, int reps, int i, int n) {\n"
"  float16 v = vload16(i, a) + vload16((i + 1) % n, a); float16 acc = v;\n"
"  for (int r = 0; r < reps; ++r) acc = fma(acc, (float16)(0.999f), v);\n"
"  vstore16(acc * 0.5f, i, b);\n}\n"
"__kernel void k(__global const float *a, __global float *b, int reps, int n) {\n"
"  int i = get_global_id(0); if (i < n) tile(a, b, reps, i, n);\n}\n"
"__kernel void p(__global float *a, __global float *b, int reps, int n, int phases, __global int *ctr) {\n"
"  for (int ph = 0; ph < phases; ++ph) {\n"
"    __global float *x = (ph & 1) ? b : a; __global float *y = (ph & 1) ? a : b;\n"
"    for (;;) { int t = atomic_inc(&ctr[2 * ph]); if (t >= n) break; tile(x, y, reps, t, n); atomic_inc(&ctr[2 * ph + 1]); }\n"
"    while (*(volatile __global int *)&ctr[2 * ph + 1] < n) ;\n"
"    (void)atomic_add(&ctr[2 * ph + 1], 0);\n"
"  }\n"
"  if (atomic_inc(&ctr[2 * phases]) == (int)get_num_groups(0) - 1) {\n"
"    for (int j = 0; j <= 2 * phases; ++j) ctr[j] = 0;\n"
"  }\n}\n";
int main(int argc, char **argv) {
  int nk = 45, runs = 200, reps = argc > 1 ? atoi(argv[1]) : 100; int n = argc > 2 ? atoi(argv[2]) : 128; size_t groups = argc > 3 ? atoi(argv[3]) : 2;
  size_t local = argc > 4 ? atoi(argv[4]) : 1;
  cl_platform_id p; cl_device_id d; cl_int e;
  clGetPlatformIDs(1,&p,0); clGetDeviceIDs(p,CL_DEVICE_TYPE_ALL,1,&d,0);
  cl_context ctx = clCreateContext(0,1,&d,0,0,&e);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx,d,0,&e);
  cl_program prog = clCreateProgramWithSource(ctx,1,&src,0,&e);
  if (clBuildProgram(prog,1,&d,"-cl-std=CL1.2",0,0)) { char log[8192]; clGetProgramBuildInfo(prog,d,CL_PROGRAM_BUILD_LOG,sizeof log,log,0); fprintf(stderr,"build failed %s\n",log); return 1; }
  size_t bytes = (size_t)n*16*4;
  cl_mem buf[2]; for (int i=0;i<2;++i) buf[i]=clCreateBuffer(ctx,CL_MEM_READ_WRITE,bytes,0,&e);
  float *h = malloc(bytes); for (size_t i=0;i<(size_t)n*16;++i) h[i]=(float)(i%7)*0.1f;
  cl_mem ctr = clCreateBuffer(ctx,CL_MEM_READ_WRITE,(2*nk+1)*4,0,&e); int *z = calloc(2*nk+1,4); clEnqueueWriteBuffer(q,ctr,1,0,(2*nk+1)*4,z,0,0,0);
  cl_kernel ks[2]; for (int i=0;i<2;++i){ ks[i]=clCreateKernel(prog,"k",&e); clSetKernelArg(ks[i],0,sizeof(cl_mem),&buf[i]); clSetKernelArg(ks[i],1,sizeof(cl_mem),&buf[1-i]); clSetKernelArg(ks[i],2,sizeof(int),&reps); clSetKernelArg(ks[i],3,sizeof(int),&n);}
  cl_kernel kp = clCreateKernel(prog,"p",&e); clSetKernelArg(kp,0,sizeof(cl_mem),&buf[0]); clSetKernelArg(kp,1,sizeof(cl_mem),&buf[1]); clSetKernelArg(kp,2,sizeof(int),&reps); clSetKernelArg(kp,3,sizeof(int),&n); clSetKernelArg(kp,4,sizeof(int),&nk); clSetKernelArg(kp,5,sizeof(cl_mem),&ctr);
  float *r1 = malloc(bytes), *r2 = malloc(bytes);
  // correctness: same result both ways
  clEnqueueWriteBuffer(q,buf[0],1,0,bytes,h,0,0,0); size_t gn = (n + local - 1) / local * local;
  for(int j=0;j<nk;++j) clEnqueueNDRangeKernel(q,ks[j%2],1,0,&gn,&local,0,0,0);
  clEnqueueReadBuffer(q,buf[nk%2],1,0,bytes,r1,0,0,0);
  clEnqueueWriteBuffer(q,buf[0],1,0,bytes,h,0,0,0); size_t one = 1, gg = groups;
  clEnqueueNDRangeKernel(q,kp,1,0,&gg,&one,0,0,0);
  clEnqueueReadBuffer(q,buf[nk%2],1,0,bytes,r2,0,0,0);
  int bad=0; for (size_t i=0;i<(size_t)n*16;++i) bad += r1[i]!=r2[i]; printf("mismatches %d\n", bad);
  double *t = malloc(sizeof(double)*runs*2);
  for (int round=0; round<3; ++round) {
    double *u=t, *c=t+runs;
    for (int r=0;r<runs;++r){
      double a=nowMs(); for(int j=0;j<nk;++j){ clEnqueueNDRangeKernel(q,ks[j%2],1,0,&gn,&local,0,0,0); if((j&(j+1))==0) clFlush(q);} clFinish(q); u[r]=nowMs()-a;
      a=nowMs(); clEnqueueNDRangeKernel(q,kp,1,0,&gg,&one,0,0,0); clFinish(q); c[r]=nowMs()-a;
    }
    qsort(u,runs,sizeof(double),cmp); qsort(c,runs,sizeof(double),cmp);
    printf("%d phases of %d tiles: launches %.3f ms (min %.3f), persistent x%zu %.3f ms (min %.3f), ratio %.3f\n", nk, n, u[runs/2], u[0], groups, c[runs/2], c[0], c[runs/2]/u[runs/2]);
  }
  return 0;
}
