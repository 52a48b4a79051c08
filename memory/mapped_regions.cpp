#include "memory/mapped_regions.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>

namespace cpufold {
namespace {

constexpr std::size_t kSlots = 64;
constexpr std::size_t kNameBytes = 400;

// A slot is claimed by `taken`, filled, then published by `begin`; the handler reads only
// published slots. Everything here is lock-free: the handler may run at any moment.
struct Slot {
  std::atomic<bool> taken{false};
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<std::size_t> bytes{0};
  std::array<char, kNameBytes + 1> name{};
};

std::array<Slot, kSlots> slots;

void say(const char* text) {
  const std::size_t n = std::strlen(text);
  for (std::size_t at = 0; at < n;) {
    const ssize_t put = ::write(STDERR_FILENO, text + at, n - at);
    if (put <= 0) return;
    at += static_cast<std::size_t>(put);
  }
}

void on_sigbus(int, siginfo_t* info, void*) {
  const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  const char* name = nullptr;
  for (const Slot& s : slots) {
    const std::uintptr_t begin = s.begin.load(std::memory_order_acquire);
    if (begin != 0 && addr >= begin && addr - begin < s.bytes.load(std::memory_order_relaxed)) {
      name = s.name.data();
      break;
    }
  }
  say("cpufold: error: bus error (SIGBUS) reading ");
  say(name != nullptr ? name : "a memory-mapped file");
  say(": the file was truncated or overwritten in place while this process had it mapped, or "
      "its storage failed. Replace files cpufold may be using by writing a new file and "
      "renaming it into place; rerun (a damaged weight cache is rebuilt).\n");
  // SA_RESETHAND restored the default action: the faulting access repeats and ends the process
  // by SIGBUS, as it would have without this handler.
}

}  // namespace

void register_mapped_region(const void* begin, std::size_t bytes, std::string_view file) {
  for (Slot& s : slots) {
    bool expected = false;
    if (!s.taken.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) continue;
    const std::size_t n = std::min(file.size(), kNameBytes);
    std::memcpy(s.name.data(), file.data(), n);
    s.name[n] = '\0';
    s.bytes.store(bytes, std::memory_order_relaxed);
    s.begin.store(reinterpret_cast<std::uintptr_t>(begin), std::memory_order_release);
    return;
  }
}

void unregister_mapped_region(const void* begin) {
  const auto key = reinterpret_cast<std::uintptr_t>(begin);
  for (Slot& s : slots) {
    if (s.begin.load(std::memory_order_acquire) != key) continue;
    s.begin.store(0, std::memory_order_release);
    s.taken.store(false, std::memory_order_release);
    return;
  }
}

void install_sigbus_message() {
  struct sigaction action {};
  action.sa_sigaction = on_sigbus;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, nullptr);
}

}  // namespace cpufold
