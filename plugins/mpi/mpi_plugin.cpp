// The `mpi` plugin: declares itself and owns MPI's life in this process
// (initialised once, finalised once); mpi_transport.cpp moves the bytes.
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mpi_transport.hpp"

namespace uniperf::mpi {
namespace {

enum class State { untouched, initialized, finalized };

struct Process {
  std::mutex mutex;
  State state = State::untouched;
  ProcessInfo info;
  int live_contexts = 0;

  /// Finalises at library unload (the end of the process) if the Plugin
  /// was never destroyed: a rank that initialised MPI and exits without
  /// MPI_Finalize fails the whole mpirun job.
  ~Process() { finalize_locked(); }

  void finalize_locked() {
    if (state != State::initialized) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
    state = State::finalized;
  }
};

Process& process() {
  static Process instance;
  return instance;
}

bool launched_by_mpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

}  // namespace

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
    return "MPI error " + std::to_string(code);
  }
  return std::string(text, static_cast<std::size_t>(length)) + " (" + std::to_string(code) + ")";
}

std::string thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "thread level " + std::to_string(level);
  }
}

std::string unavailable_reason() {
  Process& p = process();
  std::lock_guard lock(p.mutex);
  if (p.state == State::finalized) {
    return "MPI was finalized in this process and Open MPI cannot initialize it again";
  }
  if (p.state == State::untouched && !launched_by_mpi()) {
    return "not started by an MPI launcher (no OMPI_COMM_WORLD_SIZE or PMIX_RANK in the "
           "environment): run under mpirun or srun --mpi=pmix";
  }
  return "";
}

ProcessInfo acquire_process() {
  const std::string why = unavailable_reason();
  if (!why.empty()) throw Unavailable(why);
  Process& p = process();
  std::lock_guard lock(p.mutex);
  if (p.state == State::untouched) {
    // MULTIPLE: concurrent flows drive one Context each from threads of
    // their own (plugin.hpp, "Threads").
    int provided = MPI_THREAD_SINGLE;
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    if (rc != MPI_SUCCESS) {
      p.state = State::finalized;  // Open MPI does not try twice either
      throw Unavailable("MPI_Init_thread failed: " + mpi_error_text(rc));
    }
    p.state = State::initialized;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &p.info.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p.info.size);
    p.info.thread_level = provided;
  }
  if (p.live_contexts > 0 && p.info.thread_level < MPI_THREAD_MULTIPLE) {
    throw Unsupported("MPI provides " + thread_level_name(p.info.thread_level) +
                      ", so only one Context may live at a time (concurrent flows need "
                      "MPI_THREAD_MULTIPLE)");
  }
  ++p.live_contexts;
  return p.info;
}

void release_process() {
  Process& p = process();
  std::lock_guard lock(p.mutex);
  --p.live_contexts;
}

void finalize_process() {
  Process& p = process();
  std::lock_guard lock(p.mutex);
  if (p.live_contexts == 0) p.finalize_locked();
}

namespace {

class MpiPlugin final : public Plugin {
 public:
  ~MpiPlugin() override { finalize_process(); }

  std::string name() const override { return "mpi"; }
  std::string version() const override { return "0.1.0"; }

  std::string library_version() const override {
    // Both may be called before MPI_Init.
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(text, &length);
    std::string library(text, static_cast<std::size_t>(length));
    library = library.substr(0, library.find_first_of(",\n"));
    int major = 0;
    int minor = 0;
    MPI_Get_version(&major, &minor);
    return library + " (MPI " + std::to_string(major) + "." + std::to_string(minor) + ")";
  }

  std::string description() const override {
    return "MPI itself: Isend/Irecv, and Put/Get/Fetch_and_op/Compare_and_swap on a dynamic "
           "window (run under mpirun, any number of ranks)";
  }

  std::vector<OptionSpec> options() const override { return {}; }

  std::string probe() const override { return unavailable_reason(); }

  std::unique_ptr<Context> open(const Options&) override {
    const ProcessInfo info = acquire_process();
    return std::make_unique<MpiContext>(info);
  }
};

}  // namespace
}  // namespace uniperf::mpi

UNIPERF_PLUGIN(uniperf::mpi::MpiPlugin)
