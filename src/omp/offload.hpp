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

// omp_target_* on offload device d (0 <= d < num_devices()); a device argument of -1 in
// target_memcpy is the host. Return values as the omp_* routines' (0 or EINVAL for the int ones).
void* target_alloc(std::size_t size, int d);
void target_free(void* p, int d);
bool is_present(const void* p, int d);
void* mapped_ptr(const void* p, int d);  // p's device address on d, or null when p is not mapped
int target_memcpy(void* dst, const void* src, std::size_t length, std::size_t dst_offset, std::size_t src_offset,
                  int dst_device, int src_device);
int associate_ptr(const void* host, const void* dev, std::size_t size, std::size_t dev_offset, int d);
int disassociate_ptr(const void* host, int d);

// GOMP_offload_register_ver / GOMP_offload_unregister_ver.
void register_image(unsigned version, const void* host_table, int type, const void* target_data);
void unregister_image(unsigned version, const void* host_table, int type, const void* target_data);

}  // namespace weft::omp::offload

