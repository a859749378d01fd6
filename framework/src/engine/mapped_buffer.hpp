// Memory mapped for the engine's own use, on the pages a flow or a
// stage-cost measurement asks for (model::Pages): anonymous, page-aligned,
// touched before anything is timed, and given back whole.
#pragma once

#include <cstddef>
#include <memory>
#include <uniperf/plugin.hpp>
#include <vector>

#include "model/test_spec.hpp"

namespace uniperf::engine {

using model::Pages;

/// Anonymous memory mapped on `pages` and filled with `fill` (so every
/// page is faulted in now, not while timed; a fill other than zero shows a
/// test that it was), all but its first `untouched` bytes: those are left
/// as mapped (leave_untouched). Throws Unavailable naming the reason when
/// the pages cannot be had ("huge pages: none are reserved ...").
class MappedBuffer {
 public:
  MappedBuffer(std::size_t length, Pages pages, std::byte fill = std::byte{0},
               std::size_t untouched = 0);
  ~MappedBuffer();
  MappedBuffer(const MappedBuffer&) = delete;
  MappedBuffer& operator=(const MappedBuffer&) = delete;

  std::byte* data() const { return data_; }
  std::size_t length() const { return length_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t length_ = 0;
  std::size_t mapped_ = 0;  ///< length_ rounded up to the page size
};

/// Keeps the first `length` bytes at `base` (page aligned) from ever being
/// written, for send_buffers: untouched (model::SendBuffers): their whole
/// pages are kept on base pages (MADV_NOHUGEPAGE), so that reading them
/// maps the kernel's 4 KiB zero page rather than a 2 MiB huge one. Memory
/// already faulted in (a pinned registration) stays as it is.
void leave_untouched(std::byte* base, std::size_t length);

/// Writes `fill` into `length` bytes at `base` but the first `untouched`
/// (left as leave_untouched says), so that every page the run writes is
/// faulted in before anything is timed: the engine's own mappings and the
/// memory a plugin allocated (zeroed, fill 0) alike.
void fill_but_untouched(std::byte* base, std::size_t length, std::size_t untouched,
                        std::byte fill = std::byte{0});

/// One buffer per lane of a flow, mapped before the flow is set up.
using LaneMemory = std::vector<std::unique_ptr<MappedBuffer>>;

}  // namespace uniperf::engine
