#include "bootstrap/launcher.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

#ifdef UNIPERF_HAVE_PMIX
#include <pmix.h>
#endif

extern char** environ;

namespace uniperf::bootstrap {
namespace {

std::optional<int> number(const Environment& env, const std::string& name) {
  const auto it = env.find(name);
  if (it == env.end()) return std::nullopt;
  const std::string& text = it->second;
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string text_of(const Environment& env, const std::string& name) {
  const auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

std::string this_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

/// Ends the process when a launcher step (a PMIx fence or get, which may
/// not honour PMIX_TIMEOUT in every server) has not returned by its
/// deadline: a dead rank must end the other within seconds, not hang it.
class StepDeadline {
 public:
  StepDeadline(std::string step, std::chrono::milliseconds timeout) : step_(std::move(step)) {
    thread_ = std::thread([this, timeout] {
      std::unique_lock lock(mutex_);
      if (done_cv_.wait_for(lock, timeout, [this] { return done_; })) return;
      std::cerr << "uniperf: the launcher's " << step_ << " did not return within "
                << timeout.count() / 1000 << " s (another rank died or never started); ending\n";
      std::_Exit(3);  // cli's kExitNoPeer
    });
  }
  ~StepDeadline() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    thread_.join();
  }
  StepDeadline(const StepDeadline&) = delete;
  StepDeadline& operator=(const StepDeadline&) = delete;

 private:
  std::string step_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

Environment current_environment() {
  Environment env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const auto equals = entry.find('=');
    if (equals != std::string::npos) env.emplace(entry.substr(0, equals), entry.substr(equals + 1));
  }
  return env;
}

std::optional<LauncherInfo> detect_launcher(const Environment& env) {
  LauncherInfo info;
  info.pmix = env.contains("PMIX_NAMESPACE") && number(env, "PMIX_RANK").has_value();
  info.pmix_version = text_of(env, "PMIX_VERSION");
  const auto ompi_rank = number(env, "OMPI_COMM_WORLD_RANK");
  const auto ompi_size = number(env, "OMPI_COMM_WORLD_SIZE");
  const auto slurm_rank = number(env, "SLURM_PROCID");
  const bool slurm_step = env.contains("SLURM_STEP_ID") || env.contains("SLURM_STEPID");
  const auto own_rank = number(env, "UNIPERF_JOB_RANK");
  const auto own_size = number(env, "UNIPERF_JOB_SIZE");
  if (own_rank && own_size) {
    info.launcher = "uniperf";
    info.rank = *own_rank;
    info.size = *own_size;
    info.all_local = true;
    info.local_rank = *own_rank;
    info.job_id = text_of(env, "UNIPERF_JOB_ID");
    info.coordinator = text_of(env, "UNIPERF_JOB_COORDINATOR");
    info.pmix = false;  // an inherited PMIx server is not this job's
    info.pmix_version.clear();
  } else if (ompi_rank && ompi_size) {
    info.launcher = "openmpi";
    info.rank = *ompi_rank;
    info.size = *ompi_size;
    info.all_local = number(env, "OMPI_COMM_WORLD_LOCAL_SIZE") == ompi_size;
    info.local_rank = number(env, "OMPI_COMM_WORLD_LOCAL_RANK").value_or(-1);
    info.job_id = text_of(env, "OMPI_MCA_ess_base_jobid");
    if (info.job_id.empty()) info.job_id = text_of(env, "PMIX_NAMESPACE");
  } else if (slurm_rank && slurm_step) {
    info.launcher = "slurm";
    info.rank = *slurm_rank;
    auto size = number(env, "SLURM_STEP_NUM_TASKS");
    if (!size) size = number(env, "SLURM_NTASKS");
    if (!size) return std::nullopt;
    info.size = *size;
    auto nodes = number(env, "SLURM_STEP_NUM_NODES");
    if (!nodes) nodes = number(env, "SLURM_NNODES");
    info.all_local = nodes == 1;
    info.local_rank = number(env, "SLURM_LOCALID").value_or(-1);
    info.node = text_of(env, "SLURMD_NODENAME");
    const std::string step = env.contains("SLURM_STEP_ID") ? text_of(env, "SLURM_STEP_ID")
                                                           : text_of(env, "SLURM_STEPID");
    info.job_id = text_of(env, "SLURM_JOB_ID") + "." + step;
  } else if (info.pmix) {
    info.launcher = "pmix";
    info.rank = *number(env, "PMIX_RANK");
    info.size = 0;  // PMIx_Get(PMIX_JOB_SIZE) tells
    info.job_id = text_of(env, "PMIX_NAMESPACE");
  } else {
    return std::nullopt;
  }
  if (info.size == 1) return std::nullopt;
  if (info.rank < 0 || (info.size > 0 && info.rank >= info.size)) {
    throw BootstrapError("the " + info.launcher + " launcher says rank " +
                         std::to_string(info.rank) + " of " + std::to_string(info.size));
  }
  return info;
}

std::uint16_t derived_port(const std::string& job_id) {
  if (job_id.empty()) return 20000;
  std::uint32_t hash = 2166136261u;  // FNV-1a, 32 bits
  for (const char c : job_id) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 16777619u;
  }
  return static_cast<std::uint16_t>(20000 + hash % 10000);
}

bool pmix_built() {
#ifdef UNIPERF_HAVE_PMIX
  return true;
#else
  return false;
#endif
}

#ifdef UNIPERF_HAVE_PMIX
struct LauncherConnection::PmixSession {
  pmix_proc_t me{};
  bool initialized = false;
  ~PmixSession() {
    if (initialized) PMIx_Finalize(nullptr, 0);
  }
};
#else
struct LauncherConnection::PmixSession {};
#endif

LauncherConnection::LauncherConnection() = default;
LauncherConnection::~LauncherConnection() {
  links.clear();  // the others see the connections close before PMIx ends
  pmix.reset();
}

namespace {

const char* const kControlKey = "uniperf.control";

/// Rank 0: listens on an ephemeral port; the address the others connect to.
std::pair<std::unique_ptr<TcpListener>, std::string> listen_for_ranks(bool all_local) {
  auto listener = std::make_unique<TcpListener>(all_local ? "127.0.0.1" : "0.0.0.0", 0);
  std::string address =
      (all_local ? "127.0.0.1" : this_host()) + ":" + std::to_string(listener->port());
  return {std::move(listener), std::move(address)};
}

/// Rank 0's side of the star: one connection from every other rank, each
/// saying its rank first, all within `timeout`.
void accept_ranks(TcpListener& listener, LauncherConnection& connection,
                  std::chrono::milliseconds timeout) {
  connection.links.resize(static_cast<std::size_t>(connection.size));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left = [&deadline] {
    return std::max(std::chrono::milliseconds(1),
                    std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now()));
  };
  for (int joined = 1; joined < connection.size; ++joined) {
    std::unique_ptr<Bootstrap> link;
    try {
      link = listener.accept(0, left());
    } catch (const BootstrapError&) {
      std::string missing;
      for (int r = 1; r < connection.size; ++r) {
        if (!connection.links[static_cast<std::size_t>(r)])
          missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
      throw BootstrapError("rank(s) " + missing + " of " + std::to_string(connection.size) +
                           " never connected to rank 0 within " +
                           std::to_string(timeout.count() / 1000) + " s (died or never started)");
    }
    const std::string hello = link->receive_text(left());
    int rank = -1;
    if (hello.starts_with("rank ")) {
      const char* first = hello.data() + 5;
      const char* last = hello.data() + hello.size();
      if (std::from_chars(first, last, rank).ptr != last) rank = -1;
    }
    if (rank <= 0 || rank >= connection.size || connection.links[static_cast<std::size_t>(rank)])
      throw BootstrapError("rank 0 got a connection that said '" + hello.substr(0, 40) +
                           "', not the rank of another member of this job");
    connection.links[static_cast<std::size_t>(rank)] = std::move(link);
  }
}

/// Any other rank's side: connects to rank 0 and says who it is.
void join_rank0(const std::string& host, std::uint16_t port, LauncherConnection& connection,
                std::chrono::milliseconds timeout) {
  auto link = tcp_connect(host, port, 1, timeout);
  link->send_text("rank " + std::to_string(connection.rank));
  connection.links.push_back(std::move(link));
}

#ifdef UNIPERF_HAVE_PMIX
std::string pmix_error(const std::string& what, pmix_status_t status) {
  return what + " failed: " + PMIx_Error_string(status);
}

std::unique_ptr<LauncherConnection> connect_pmix(const LauncherInfo& info,
                                                 std::chrono::milliseconds timeout) {
  auto connection = std::make_unique<LauncherConnection>();
  connection->pmix = std::make_unique<LauncherConnection::PmixSession>();
  auto& session = *connection->pmix;
  {
    StepDeadline deadline("PMIx_Init", timeout);
    const pmix_status_t status = PMIx_Init(&session.me, nullptr, 0);
    if (status != PMIX_SUCCESS) throw BootstrapError(pmix_error("PMIx_Init", status));
  }
  session.initialized = true;
  const int rank = static_cast<int>(session.me.rank);
  int size = info.size;
  {
    pmix_proc_t job{};
    PMIX_LOAD_PROCID(&job, session.me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t* value = nullptr;
    StepDeadline deadline("PMIx_Get(PMIX_JOB_SIZE)", timeout);
    if (PMIx_Get(&job, PMIX_JOB_SIZE, nullptr, 0, &value) == PMIX_SUCCESS && value != nullptr) {
      if (value->type == PMIX_UINT32) size = static_cast<int>(value->data.uint32);
      PMIX_VALUE_RELEASE(value);
    }
  }
  connection->facts = {.method = "pmix",
                       .launcher = info.launcher,
                       .ranks = size,
                       .pmix_version = PMIx_Get_version(),
                       .rendezvous = ""};
  if (size < 2) throw BootstrapError("PMIx says the job has " + std::to_string(size) + " rank(s)");
  connection->rank = rank;
  connection->size = size;

  const int seconds = static_cast<int>(std::max<long long>(1, timeout.count() / 1000));
  std::unique_ptr<TcpListener> listener;
  if (rank == 0) {
    std::string address;
    std::tie(listener, address) = listen_for_ranks(info.all_local);
    connection->facts.rendezvous = address;
    pmix_value_t value{};
    PMIx_Value_load(&value, address.c_str(), PMIX_STRING);
    pmix_status_t status = PMIx_Put(PMIX_GLOBAL, kControlKey, &value);
    PMIx_Value_destruct(&value);
    if (status != PMIX_SUCCESS) throw BootstrapError(pmix_error("PMIx_Put", status));
    status = PMIx_Commit();
    if (status != PMIX_SUCCESS) throw BootstrapError(pmix_error("PMIx_Commit", status));
  }
  {
    pmix_info_t fence_info[2];
    PMIX_INFO_CONSTRUCT(&fence_info[0]);
    PMIX_INFO_CONSTRUCT(&fence_info[1]);
    const bool collect = true;
    PMIx_Info_load(&fence_info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    PMIx_Info_load(&fence_info[1], PMIX_TIMEOUT, &seconds, PMIX_INT);
    StepDeadline deadline("PMIx_Fence", timeout + std::chrono::seconds(5));
    const pmix_status_t status = PMIx_Fence(nullptr, 0, fence_info, 2);
    PMIX_INFO_DESTRUCT(&fence_info[0]);
    PMIX_INFO_DESTRUCT(&fence_info[1]);
    if (status != PMIX_SUCCESS) throw BootstrapError(pmix_error("PMIx_Fence", status));
  }
  if (rank == 0) {
    accept_ranks(*listener, *connection, timeout);
    return connection;
  }
  std::string address;
  {
    pmix_proc_t rank0{};
    PMIX_LOAD_PROCID(&rank0, session.me.nspace, 0);
    pmix_info_t get_info;
    PMIX_INFO_CONSTRUCT(&get_info);
    PMIx_Info_load(&get_info, PMIX_TIMEOUT, &seconds, PMIX_INT);
    pmix_value_t* value = nullptr;
    StepDeadline deadline("PMIx_Get of rank 0's address", timeout + std::chrono::seconds(5));
    const pmix_status_t status = PMIx_Get(&rank0, kControlKey, &get_info, 1, &value);
    PMIX_INFO_DESTRUCT(&get_info);
    if (status != PMIX_SUCCESS || value == nullptr)
      throw BootstrapError(pmix_error("PMIx_Get of rank 0's control address", status));
    if (value->type == PMIX_STRING && value->data.string != nullptr) address = value->data.string;
    PMIX_VALUE_RELEASE(value);
  }
  connection->facts.rendezvous = address;
  const auto [host, port] = split_host_port(address);
  join_rank0(host, port, *connection, timeout);
  return connection;
}
#endif

std::unique_ptr<LauncherConnection> connect_env(
    const LauncherInfo& info,
    const std::optional<std::pair<std::string, std::uint16_t>>& coordinator,
    std::chrono::milliseconds timeout) {
  auto connection = std::make_unique<LauncherConnection>();
  connection->facts = {.method = "launcher-env",
                       .launcher = info.launcher,
                       .ranks = info.size,
                       .pmix_version = info.pmix_version,
                       .rendezvous = ""};
  if (info.size == 0) {
    throw BootstrapError(
        "started by a PMIx launcher, but this uniperf was built without libpmix, and the "
        "environment does not say how many ranks the job has");
  }
  connection->rank = info.rank;
  connection->size = info.size;
  std::string host;
  std::uint16_t port = 0;
  if (coordinator) {
    std::tie(host, port) = *coordinator;
  } else if (info.all_local) {
    host = "127.0.0.1";
    port = derived_port(info.job_id);
  } else {
    throw BootstrapError("the " + info.launcher +
                         " ranks run on more than one host: give --coordinator HOST:PORT (rank "
                         "0's host and a free port there)");
  }
  connection->facts.rendezvous = host + ":" + std::to_string(port);
  if (info.rank == 0) {
    TcpListener listener(coordinator ? "0.0.0.0" : host, port);
    accept_ranks(listener, *connection, timeout);
  } else {
    join_rank0(host, port, *connection, timeout);
  }
  return connection;
}

}  // namespace

std::unique_ptr<LauncherConnection> connect_launcher(
    const LauncherInfo& info,
    const std::optional<std::pair<std::string, std::uint16_t>>& coordinator,
    std::chrono::milliseconds timeout) {
#ifdef UNIPERF_HAVE_PMIX
  if (info.pmix && !coordinator) return connect_pmix(info, timeout);
#endif
  return connect_env(info, coordinator, timeout);
}

}  // namespace uniperf::bootstrap
