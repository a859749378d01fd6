// `uniperf serve`: a bare server, iperf3 style. It needs no suite or config
// file: each client sends the texts of its own in the handshake
// (session::Offer), the server parses them as the client did, and runs the
// responder's side. Clients are served one after another until a signal
// stops the server, or after the first with --once.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace uniperf::cli {

struct ServeOptions {
  CLI::App* command = nullptr;
  std::string listen;      // --listen [HOST:]PORT
  bool once = false;       // --once: exit after the first client
  double heartbeat_s = 5;  // --heartbeat S: a client silent this long is lost
  std::optional<int> cpu;  // --cpu N: pin the server
};

void add_serve_command(CLI::App& app, ServeOptions& options);

/// Serves until stopped; the exit code (cli/exit_codes.hpp): with --once
/// the client's run's (as the responder of `--listen` would end), else 0
/// when a signal stopped the server between clients, 130 during one.
int run_serve_command(const ServeOptions& options);

}  // namespace uniperf::cli
