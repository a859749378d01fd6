#include "engine/mapped_buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace uniperf::engine {
namespace {

/// A value of /proc/meminfo ("Hugepagesize:", in kB), or `otherwise`.
long meminfo_kb(const std::string& key, long otherwise) {
  std::ifstream in("/proc/meminfo");
  std::string name;
  long value = 0;
  std::string unit;
  while (in >> name >> value) {
    std::getline(in, unit);
    if (name == key) return value;
  }
  return otherwise;
}

long nr_hugepages() {
  std::ifstream in("/proc/sys/vm/nr_hugepages");
  long n = -1;
  in >> n;
  return n;
}

std::string huge_pages_missing(std::size_t length, int error) {
  const long reserved = nr_hugepages();
  if (reserved == 0) {
    return "huge pages: none are reserved (vm.nr_hugepages is 0; as root: sysctl "
           "vm.nr_hugepages=N)";
  }
  return "huge pages: mapping " + std::to_string(length) +
         " bytes failed: " + std::strerror(error) + " (" +
         std::to_string(meminfo_kb("HugePages_Free:", -1)) + " of " + std::to_string(reserved) +
         " reserved pages free)";
}

}  // namespace

void leave_untouched(std::byte* base, std::size_t length) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t whole = length / page * page;
  // Advice only: on huge pages (MAP_HUGETLB) it fails, and reads there
  // fault in real zeroed pages.
  if (whole != 0) (void)::madvise(base, whole, MADV_NOHUGEPAGE);
}

void fill_but_untouched(std::byte* base, std::size_t length, std::size_t untouched,
                        std::byte fill) {
  untouched = std::min(untouched, length);
  if (untouched != 0) leave_untouched(base, untouched);
  std::memset(base + untouched, std::to_integer<int>(fill), length - untouched);
}

MappedBuffer::MappedBuffer(std::size_t length, Pages pages, std::byte fill, std::size_t untouched)
    : length_(length) {
  const std::size_t page = pages == Pages::huge
                               ? static_cast<std::size_t>(meminfo_kb("Hugepagesize:", 2048)) * 1024
                               : static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  mapped_ = (std::max<std::size_t>(length, 1) + page - 1) / page * page;
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | (pages == Pages::huge ? MAP_HUGETLB : 0);
  void* at = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (at == MAP_FAILED) {
    const int error = errno;
    if (pages == Pages::huge) throw Unavailable(huge_pages_missing(mapped_, error));
    throw Unavailable("memory: mapping " + std::to_string(mapped_) +
                      " bytes failed: " + std::strerror(error));
  }
  data_ = static_cast<std::byte*>(at);
  fill_but_untouched(data_, mapped_, untouched, fill);
}

MappedBuffer::~MappedBuffer() {
  if (data_ != nullptr) ::munmap(data_, mapped_);
}

}  // namespace uniperf::engine
