#include "memory/heap_policy.h"

#include <malloc.h>

namespace cpufold {

void limit_heap_growth() {
  // Setting the threshold also turns glibc's dynamic adjustment of it off (mallopt(3)).
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kHeapMmapThreshold));
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(kHeapTrimThreshold));
}

void return_free_heap_memory() {
  malloc_trim(0);
}

}  // namespace cpufold
