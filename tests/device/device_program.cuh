// What the plain CUDA programs of tests/device and tests/bench share: the CUDA error check, the
// command line (options, numbers, refusal with the usage text), the SIGALRM watchdog, the pause
// for a resume file and %globaltimer. Each program keeps its own options, usage text and watchdog
// duration.
#pragma once

#include <cuda_runtime.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <thread>

#include <unistd.h>

namespace gpupart_dev {

// A failed CUDA call: "error <where>: <what>" on stderr, exit 1.
inline void check(cudaError_t err, const char* where) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "error %s: %s\n", where, cudaGetErrorString(err));
    std::exit(1);
  }
}

// One command-line option: a flag, or one that takes the next argument as a number in [lo, hi]
// or as a text.
struct Option {
  Option(const char* option, bool* flag_out) : name(option), flag(flag_out) {}
  Option(const char* option, long* number_out, long min, long max)
      : name(option), number(number_out), lo(min), hi(max) {}
  Option(const char* option, const char** text_out) : name(option), text(text_out) {}

  const char* name;
  bool* flag = nullptr;
  long* number = nullptr;
  long lo = 0;
  long hi = 0;
  const char** text = nullptr;
};

// A program's usage text (which ends in a newline) and the ways it refuses a command line.
struct Usage {
  const char* text;

  // "error usage: <what>" and the usage text on stderr, exit 1.
  [[noreturn]] void error(const char* what) const {
    std::fprintf(stderr, "error usage: %s\n%s", what, text);
    std::exit(1);
  }

  // The decimal value of `value` in [lo, hi]; anything else is a usage error naming `option`.
  long parse_long(const char* value, long lo, long hi, const char* option) const {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(value, &end, 10);
    if (errno != 0 || end == value || *end != '\0' || v < lo || v > hi) error(option);
    return v;
  }

  // Sets what argv[1..] give, in order, a later one winning. An argument that is none of
  // `options`, or an option that needs a value and comes last, is a usage error naming it.
  void parse(int argc, char** argv, std::initializer_list<Option> options) const {
    for (int i = 1; i < argc; ++i) {
      const char* a = argv[i];
      const bool has_value = i + 1 < argc;
      const Option* option = nullptr;
      for (const Option& o : options) {
        if (std::strcmp(a, o.name) == 0) {
          option = &o;
          break;
        }
      }
      if (option == nullptr || (option->flag == nullptr && !has_value)) error(a);
      if (option->flag != nullptr) {
        *option->flag = true;
      } else if (option->number != nullptr) {
        *option->number = parse_long(argv[++i], option->lo, option->hi, option->name);
      } else {
        *option->text = argv[++i];
      }
    }
  }
};

// SIGALRM handler: only async-signal-safe calls. A hung GPU or a lost resume file must not
// leave the test waiting forever.
inline void on_watchdog(int) {
  static const char msg[] = "error watchdog-timeout\n";
  ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
  _exit(3);
}

// After `seconds`, whatever the program is doing: "error watchdog-timeout" on stderr, exit 3.
inline void start_watchdog(unsigned seconds) {
  std::signal(SIGALRM, on_watchdog);
  alarm(seconds);
}

// The pause the device tests use to change a process's mask between two launches: "PAUSED" on
// stdout, then wait until `path` exists. Not there within 30 s: "error resume-timeout" on stderr,
// exit 2.
inline void wait_for_resume(const char* path) {
  constexpr int kResumeTimeoutS = 30;
  std::printf("PAUSED\n");
  std::fflush(stdout);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kResumeTimeoutS);
  while (access(path, F_OK) != 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      std::fprintf(stderr, "error resume-timeout\n");
      std::exit(2);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace gpupart_dev
