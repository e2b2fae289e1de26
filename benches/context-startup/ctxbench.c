// Times what a fresh process spends before it can run CUDA work: cuInit, the primary context,
// a first allocation; and optionally tearing it down. Prints one line: mode init_ms ctx_ms alloc_ms rel_ms total_ms
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
// `inproc K`: one process, its primary context held as a memory probe holds it, then K contexts
// made, used and destroyed one after the other: one line each (init 0, create, alloc, destroy).
static int inproc(int k){
  CUdevice d; cuDeviceGet(&d,0);
  CUcontext primary; cuDevicePrimaryCtxRetain(&primary,d); cuCtxSetCurrent(primary);
  CUdeviceptr q; cuMemAlloc(&q,1<<20);
  for(int i=0;i<k;i++){
    double a=now(); CUcontext c;
    if(cuCtxCreate(&c,NULL,0,d)){printf("create failed\n");return 1;}
    double b=now();
    CUdeviceptr p; cuMemAlloc(&p,1<<20); cuMemsetD8(p,0,1<<20); cuCtxSynchronize();
    double e=now();
    cuMemFree(p); cuCtxDestroy(c); cuCtxSetCurrent(primary);
    double f=now();
    printf("inproc 0 %.1f %.1f %.1f %.1f\n",b-a,e-b,f-e,f-a);
  }
  return 0;
}
int main(int argc,char**argv){
  const char*mode=argc>1?argv[1]:"ctx";
  double t0=now();
  if(cuInit(0)){printf("init failed\n");return 1;}
  double t1=now();
  if(!strcmp(mode,"inproc")) return inproc(argc>2?atoi(argv[2]):6);
  if(!strcmp(mode,"init")){printf("%s %.1f 0 0 0 %.1f\n",mode,t1-t0,t1-t0);return 0;}
  CUdevice d; cuDeviceGet(&d, argc>2?atoi(argv[2]):0);
  CUcontext c;
  if(!strcmp(mode,"create")){ if(cuCtxCreate(&c,NULL,0,d)){printf("create failed\n");return 1;} }
  else { cuDevicePrimaryCtxRetain(&c,d); cuCtxSetCurrent(c);}
  double t2=now();
  CUdeviceptr p; cuMemAlloc(&p,1<<20); cuMemsetD8(p,0,1<<20); cuCtxSynchronize();
  double t3=now();
  double t4=t3;
  if(!strcmp(mode,"hold")){ sleep(atoi(argv[3])); }
  if(!strcmp(mode,"rel")){ cuMemFree(p); cuDevicePrimaryCtxRelease(d); t4=now(); }
  printf("%s %.1f %.1f %.1f %.1f %.1f\n",mode,t1-t0,t2-t1,t3-t2,t4-t3,t4-t0);
  return 0;
}
