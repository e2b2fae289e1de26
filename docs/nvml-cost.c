// What a memory probe's readings cost (docs/nvml-cost.sh runs it, 1, 8 and 16 processes at once):
// after making a CUDA context and 1 MiB on GPU 0, times CALLS NVML listings of the compute
// processes (nvmlDeviceGetComputeRunningProcesses_v3, the call of ProcessMemoryProbe::used_bytes),
// CALLS cudaMemGetInfo and CALLS host threads made and joined; prints microseconds a call of each.
// A diagnostic, not part of the product: C, because it needs nothing but nvcc on the GPU machine.
#include <cuda_runtime.h>
#include <nvml.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <pthread.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
static void* nop(void*a){return a;}
int main(int argc,char**argv){
  int n=argc>1?atoi(argv[1]):2000;
  cudaFree(0); void*p; cudaMalloc(&p,1<<20);
  nvmlInit_v2(); nvmlDevice_t d; nvmlDeviceGetHandleByIndex_v2(0,&d);
  nvmlProcessInfo_t e[64]; unsigned c;
  double t0=now();
  for(int i=0;i<n;i++){c=64; nvmlDeviceGetComputeRunningProcesses_v3(d,&c,e);}
  double t1=now();
  size_t fr,to; for(int i=0;i<n;i++) cudaMemGetInfo(&fr,&to);
  double t2=now();
  for(int i=0;i<n;i++){pthread_t th; pthread_create(&th,0,nop,0); pthread_join(th,0);}
  double t3=now();
  printf("listed=%u nvml_list_us=%.1f memgetinfo_us=%.1f thread_us=%.1f\n",c,(t1-t0)/n,(t2-t1)/n,(t3-t2)/n);
  return 0;
}
