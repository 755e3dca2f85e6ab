// Offload devices of the OpenMP door (offload.cpp): libgomp's plugin interface (GOMP_OFFLOAD_*),
// the device data environments, and the host side of target, target data, target update and
// target enter/exit data. target.cpp's GOMP_* entry points call in here; with no device they keep
// the host fallback.
#pragma once

#include <cstddef>

namespace weft::omp::offload {

// Number of offload devices (loads the plugins on first use).
int num_devices();

// The device a construct's `device` argument names (GOMP_DEVICE_ICV: default-device-var;
// GOMP_DEVICE_HOST_FALLBACK or an out-of-range number: none). -1 means the host; what names the
// construct in OMP_TARGET_OFFLOAD=mandatory's message.
int resolve(int device, const char* construct);

// GOMP_target_ext on device d (resolve()'s result >= 0). false: the region cannot run there (no
// device function for fn): the caller falls back to the host.
bool run_target(int d, void (*fn)(void*), std::size_t mapnum, void** hostaddrs, std::size_t* sizes,
                unsigned short* kinds, unsigned flags, void** depend, void** args);
void target_data(int d, std::size_t mapnum, void** hostaddrs, std::size_t* sizes, unsigned short* kinds);
// Pops the innermost target data (device or host); no-op for a host one.
void end_target_data();
// A host-fallback target data region (keeps end_target_data's stack balanced).
void push_host_data();
void update(int d, std::size_t mapnum, void** hostaddrs, std::size_t* sizes, unsigned short* kinds);
void enter_exit(int d, std::size_t mapnum, void** hostaddrs, std::size_t* sizes, unsigned short* kinds,
                unsigned flags);

// GOMP_offload_register_ver / GOMP_offload_unregister_ver.
void register_image(unsigned version, const void* host_table, int type, const void* target_data);
void unregister_image(unsigned version, const void* host_table, int type, const void* target_data);

}  // namespace weft::omp::offload

// Forwarders with C linkage for the omp_* device routines (api.cpp's omp_get_num_devices etc. can
// call these; they hide the plugin machinery).
extern "C" {
int weft_omp_offload_num_devices(void);
}
