// What CUPTI alone costs a program, beside what the interposer records: preloaded, it subscribes
// to CUPTI as the interposer does (the resource domain's stream creation and destruction, and the
// stream-creating API calls) with a callback that does nothing. run.sh runs first_calls and
// overhead_check with it preloaded, beside their bare and traced runs: the difference from bare
// is CUPTI's, which no figure in a trace can hold.
// CUPTI_ONLY=none: subscribe only; CUPTI_ONLY=resource: the resource domain only.
#include <cupti.h>
#include <stdlib.h>
#include <string.h>

static void CUPTIAPI nothing(void* u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void* data) {}

__attribute__((constructor)) static void subscribe(void) {
    CUpti_SubscriberHandle s;
    if (cuptiSubscribe(&s, (CUpti_CallbackFunc)nothing, NULL) != CUPTI_SUCCESS) return;
    const char* only = getenv("CUPTI_ONLY");
    if (only && strcmp(only, "none") == 0) return;
    cuptiEnableCallback(1, s, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_STREAM_CREATED);
    cuptiEnableCallback(1, s, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING);
    if (only && strcmp(only, "resource") == 0) return;
    cuptiEnableCallback(1, s, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamCreate);
    cuptiEnableCallback(1, s, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamCreateWithPriority);
    cuptiEnableCallback(1, s, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020);
    cuptiEnableCallback(1, s, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000);
    cuptiEnableCallback(1, s, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithPriority_v5050);
}
