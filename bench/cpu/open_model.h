// A model .so opened for a bench tool (ab_models.cpp, huge_input.cpp): its
// entry points and a container of one instance on the CPU device
// (AOTC_DEVICE to change it). Header-only, so that each tool still builds
// from its one .cpp file (usage in their headers).
#pragma once

#include "aotc/aotc_runtime.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

struct OpenedModel {
  decltype(&aotc_container_run) run = nullptr;
  decltype(&aotc_container_num_outputs) numOutputs = nullptr;
  decltype(&aotc_last_error) lastError = nullptr;
  aotc_container_t *container = nullptr;
};

// Opens \p path into \p m; false, with a message on stderr that names
// \p tool and the path, where the library, an entry point or the container
// cannot be had. The library stays loaded (the tool's process is short).
inline bool openModel(const char *tool, const char *path, OpenedModel &m) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "%s: %s\n", tool, dlerror());
    return false;
  }
  auto create = reinterpret_cast<decltype(&aotc_container_create)>(
      dlsym(h, "aotc_container_create"));
  m.run = reinterpret_cast<decltype(&aotc_container_run)>(
      dlsym(h, "aotc_container_run"));
  m.numOutputs = reinterpret_cast<decltype(&aotc_container_num_outputs)>(
      dlsym(h, "aotc_container_num_outputs"));
  m.lastError =
      reinterpret_cast<decltype(&aotc_last_error)>(dlsym(h, "aotc_last_error"));
  aotc_container_options_t options;
  std::memset(&options, 0, sizeof options);
  options.struct_size = sizeof options;
  options.device = "cpu";
  options.num_instances = 1;
  if (const char *d = std::getenv("AOTC_DEVICE"))
    options.device = d;
  if (!create || !m.run || !m.numOutputs || !m.lastError ||
      create(&options, &m.container) != AOTC_OK) {
    std::fprintf(stderr, "%s: %s: %s\n", tool, path,
                 m.lastError ? m.lastError() : "not a model");
    return false;
  }
  return true;
}
