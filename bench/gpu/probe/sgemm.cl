// A parametric SGEMM (row-major A[M,K] x B[K,N] = C[M,N]) for probing what
// the work-group tile template (compiler/schedule/local_tile.cpp) should
// emit on a GPU: bench/gpu/probe/sgemm_probe.py builds it with -D values.
// GM x GN work-items, each TM rows x TN columns (TN/4 float4 groups, 4 * GN
// columns apart); BK reduction steps staged per block, NBUF local buffers
// (2: one barrier per block), AVEC/BVEC: float4 global loads when staging.
// Sizes must be multiples of the blocks (a probe, not a kernel for users).
#ifndef IDX
#define IDX int
#endif
#define BM (GM * TM)
#define BN (GN * TN)
#define WG (GM * GN)
#define APAD 4
#define A_PER (BM * BK / (AVEC * WG))
#define B_PER (BK * BN / (BVEC * WG))

#ifndef CAST
#define CAST 0
#endif
// CAST 1: vector accesses through float4 pointers (16-byte alignment the
// compiler may assume) instead of vload4/vstore4 (4-byte alignment only).
#if CAST
#define LD4G(p) (*(__global const float4 *)(p))
#define LD4L(p) (*(__local const float4 *)(p))
#else
#define LD4G(p) vload4(0, p)
#define LD4L(p) vload4(0, p)
#endif
#if AVEC == 4
typedef float4 avec_t;
#define LDA(p) LD4G(p)
#else
typedef float avec_t;
#define LDA(p) (p)[0]
#endif
#if BVEC == 4
typedef float4 bvec_t;
#define LDB(p) LD4G(p)
#else
typedef float bvec_t;
#define LDB(p) (p)[0]
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
sgemm(__global const float *A, __global const float *B, __global float *C,
      int M, int N, int K) {
  __local float As[NBUF][BK][BM + APAD] __attribute__((aligned(16)));
  __local float Bs[NBUF][BK][BN] __attribute__((aligned(16)));
  const IDX lid = get_local_id(0);
  const IDX nbn = N / BN;
  const IDX grp = get_group_id(0);
  const IDX gn = grp % nbn, gm = grp / nbn;
  const IDX ly = lid / GN, lx = lid % GN;
  __global const float *Ab = A + (size_t)(gm * BM) * K;
  __global const float *Bb = B + gn * BN;
  avec_t ra[A_PER];
  bvec_t rb[B_PER];
  float4 acc[TM][TN / 4];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int g = 0; g < TN / 4; ++g)
      acc[i][g] = (float4)(0.0f);
  const IDX nk = K / BK;

#define LOAD(kb)                                                               \
  {                                                                            \
    _Pragma("unroll") for (int s = 0; s < A_PER; ++s) {                        \
      IDX e = s * WG + lid;                                                    \
      IDX row = e / (BK / AVEC), kq = e % (BK / AVEC);                         \
      __global const float *p = Ab + row * K + (kb) * BK + kq * AVEC;         \
      ra[s] = LDA(p);                                                          \
    }                                                                          \
    _Pragma("unroll") for (int s = 0; s < B_PER; ++s) {                        \
      IDX e = s * WG + lid;                                                    \
      IDX k = e / (BN / BVEC), nq = e % (BN / BVEC);                           \
      __global const float *p = Bb + ((kb) * BK + k) * N + nq * BVEC;          \
      rb[s] = LDB(p);                                                          \
    }                                                                          \
  }
#define STORE(buf)                                                             \
  {                                                                            \
    _Pragma("unroll") for (int s = 0; s < A_PER; ++s) {                        \
      IDX e = s * WG + lid;                                                    \
      IDX row = e / (BK / AVEC), kq = e % (BK / AVEC);                         \
      float tmp[4];                                                            \
      *(avec_t *)tmp = ra[s];                                                  \
      _Pragma("unroll") for (int j = 0; j < AVEC; ++j)                         \
        As[buf][kq * AVEC + j][row] = tmp[j];                                  \
    }                                                                          \
    _Pragma("unroll") for (int s = 0; s < B_PER; ++s) {                        \
      IDX e = s * WG + lid;                                                    \
      IDX k = e / (BN / BVEC), nq = e % (BN / BVEC);                           \
      *(__local bvec_t *)&Bs[buf][k][nq * BVEC] = rb[s];                       \
    }                                                                          \
  }
#define COMPUTE(buf)                                                           \
  {                                                                            \
    _Pragma("unroll") for (int kk = 0; kk < BK; ++kk) {                        \
      float a[TM];                                                             \
      float4 b[TN / 4];                                                        \
      _Pragma("unroll") for (int q = 0; q < TM / 4; ++q)                       \
        vstore4(LD4L(&As[buf][kk][ly * TM + 4 * q]), 0, a + 4 * q);           \
      _Pragma("unroll") for (int g = 0; g < TN / 4; ++g)                       \
        b[g] = LD4L(&Bs[buf][kk][g * 4 * GN + lx * 4]);                        \
      _Pragma("unroll") for (int i = 0; i < TM; ++i)                           \
        _Pragma("unroll") for (int g = 0; g < TN / 4; ++g)                     \
          acc[i][g] = fma((float4)(a[i]), b[g], acc[i][g]);                    \
    }                                                                          \
  }

  LOAD(0);
  STORE(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (IDX kb = 0; kb < nk; ++kb) {
#if NBUF == 2
    const int cur = kb & 1;
#else
    const int cur = 0;
#endif
    if (kb + 1 < nk)
      LOAD(kb + 1);
    COMPUTE(cur);
#if NBUF == 2
    if (kb + 1 < nk)
      STORE(cur ^ 1);
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    barrier(CLK_LOCAL_MEM_FENCE);
    if (kb + 1 < nk) {
      STORE(0);
      barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int g = 0; g < TN / 4; ++g)
      vstore4(acc[i][g], 0,
              C + (size_t)(gm * BM + ly * TM + i) * N + gn * BN + g * 4 * GN +
                  lx * 4);
}
