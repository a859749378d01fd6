// With no --peer and no --listen, `uniperf run` measures on this machine: it
// starts a second uniperf process as the responder over loopback, so a suite
// runs with one command and no second terminal.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "session/session.hpp"

namespace uniperf::cli {

/// This uniperf executable's path (/proc/self/exe), to start it again.
std::string self_executable();

/// Starts this executable in a child process with `argv` (argv[0] first),
/// its standard output and error into the file `output` when one is named
/// (else this process's own), with this process's environment plus
/// `extra_env` ("NAME=VALUE" each). With `die_with_parent` the child is
/// killed when this process ends, however it ends. Returns the child's pid,
/// or -1 with errno set when it cannot fork.
pid_t start_self(const std::vector<std::string>& argv, const std::string& output = "",
                 const std::vector<std::string>& extra_env = {}, bool die_with_parent = false);

class LocalPair {
 public:
  /// Listens on an ephemeral loopback port and starts this executable again
  /// with the same arguments plus --pair-connect 127.0.0.1:PORT.
  LocalPair(int argc, char** argv);
  /// Kills the responder if it is still running.
  ~LocalPair();
  LocalPair(const LocalPair&) = delete;
  LocalPair& operator=(const LocalPair&) = delete;

  /// The control connection to the responder (rank 0 here). Fails fast when
  /// the responder exits before connecting.
  std::unique_ptr<bootstrap::Bootstrap> accept();
  /// accept() and then `handshake` over the connection. A responder lost on
  /// the way (killed, or its connection closed or wedged before the
  /// handshake ended) is replaced by a fresh one started the same way, up
  /// to kConnectAttempts responders in all; one that exited by itself said
  /// why on stderr and is not started again. Throws when none connected.
  std::unique_ptr<bootstrap::Bootstrap> connect(
      const std::function<void(bootstrap::Bootstrap&)>& handshake);
  /// Waits a few seconds for the responder to exit; kills it otherwise.
  /// Returns its exit status.
  int wait();
  /// Ends the responder (gone or wedged: it is killed, and reaped either
  /// way) and starts a fresh one that begins the suite at `resume` (passed
  /// as --pair-resume CONFIG:TEST); accept() then connects it.
  void replace(const std::string& resume);
  /// The suite run over `control` to its end (session::run_from): a
  /// responder lost on the way, dead or wedged, is replaced by a fresh one
  /// that goes on from the test after the one it was lost in, so a lost
  /// responder costs one test, not the rest of the run. Each fresh
  /// responder's connection goes through `handshake` and is left in
  /// `control`; `why_lost` says why the one before was lost, for the
  /// message. A raised settings.stop_requested ends it with what finished.
  /// `control` is null on return when a fresh responder could not be
  /// started (said on stderr).
  std::vector<results::Record> run_replacing(
      std::unique_ptr<bootstrap::Bootstrap>& control, const model::SuiteSpec& suite,
      const std::vector<model::ConfigSpec>& configs, loader::PluginRegistry& plugins,
      const session::RunSettings& settings, const session::Observer& observer,
      const std::function<void(bootstrap::Bootstrap&)>& handshake,
      const std::function<std::string()>& why_lost);
  /// The responder's process id (-1 when there is none).
  pid_t responder() const { return child_; }

 private:
  static constexpr int kConnectAttempts = 3;

  void spawn(const std::vector<std::string>& extra);
  void reap();
  /// Whether the responder ended with an exit status of its own (not by a
  /// signal, and not still running).
  bool exited_by_itself();

  bootstrap::TcpListener listener_;
  std::vector<std::string> args_;   // this command line plus --pair-connect ADDRESS
  std::vector<std::string> extra_;  // what the running responder was started with besides
  pid_t child_ = -1;
  int ended_status_ = 0;  // the responder's wait status once reaped by accept() or
                          // exited_by_itself(); 0 otherwise
};

}  // namespace uniperf::cli
