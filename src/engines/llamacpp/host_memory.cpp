#include "engines/llamacpp/host_memory.h"

#include "kvplan/units.h"
#include "model/checked.h"

namespace kvplan {

HostMemory llamacpp_host_memory(const LlamaCppResult& r) {
  HostMemory host;
  host.host_bytes = (Checked(r.model_host_bytes, "host memory") + r.host_cache_bytes + r.output_buffer_bytes.value_or(0)).value();
  host.read_bytes = checked_add(r.model_host_layer_bytes, r.host_cache_bytes, "host memory");
  return host;
}

}  // namespace kvplan
