// The readers of the files a run writes beside its results, which
// `uniperf report --html` reads back: the per-request trace (RESULTS.trace.csv,
// report/completions.hpp) when the input's first byte is 't', else the kept
// latency samples (RESULTS.samples.csv, report/latency_samples.hpp). Each
// reports what stopped it and keeps the rows before; anything escaping, a
// crash, a leak or a hang is a finding. What they read goes into the page as
// the HTML report writes it (bytes that are not UTF-8 replaced). The readers
// take a path, so the input goes through a file.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "report/completions.hpp"
#include "report/html_report.hpp"
#include "report/latency_samples.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // One file per fuzzing process, removed at its exit.
  static const struct Scratch {
    std::string path = "/tmp/uniperf-fuzz-sidecar." + std::to_string(::getpid());
    ~Scratch() { ::unlink(path.c_str()); }
  } scratch;
  const std::string& path = scratch.path;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data) + 1, static_cast<std::streamsize>(size - 1));
  }
  if (data[0] == 't') {
    uniperf::report::CompletionSampler completions;
    (void)completions.read_file(path);
    (void)uniperf::report::script_safe_json(completions.to_json());
  } else {
    uniperf::report::LatencySampler samples;
    (void)samples.read_file(path);
    (void)uniperf::report::script_safe_json(samples.to_json());
  }
  return 0;
}
