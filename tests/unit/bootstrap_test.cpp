// The TCP control channel against what may connect to a control port: a
// real peer, a program that is not uniperf, a frame announcing a huge
// length, nothing at all. Each is refused with a message, bounded in time
// and memory; nothing the wire says is allocated before it is checked.
#include "bootstrap/bootstrap.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

namespace uniperf::bootstrap {
namespace {

using namespace std::chrono_literals;

/// A plain TCP client that writes raw bytes to 127.0.0.1:port.
class RawClient {
 public:
  explicit RawClient(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  }
  ~RawClient() { ::close(fd_); }
  void write(const void* data, std::size_t size) {
    EXPECT_EQ(::send(fd_, data, size, MSG_NOSIGNAL), static_cast<ssize_t>(size));
  }

 private:
  int fd_;
};

std::string receive_error(Bootstrap& channel, std::chrono::milliseconds timeout) {
  try {
    channel.receive(timeout);
  } catch (const BootstrapError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(HostPort, SplitsAtTheLastColonAndRefusesWhatIsNotHostAndPort) {
  EXPECT_EQ(split_host_port("n1:18521"), (std::pair<std::string, std::uint16_t>{"n1", 18521}));
  EXPECT_EQ(split_host_port("fe80::1:80").first, "fe80::1");
  for (const char* bad : {"n1", "n1:", ":80", "n1:http", "n1:65536", "n1:-1"}) {
    try {
      split_host_port(bad);
      ADD_FAILURE() << bad << " was split";
    } catch (const BootstrapError& e) {
      EXPECT_NE(std::string(e.what()).find("expected HOST:PORT"), std::string::npos) << e.what();
    }
  }
}

TEST(TcpBootstrap, PeersExchangeFramedMessages) {
  TcpListener listener("127.0.0.1", 0);
  std::unique_ptr<Bootstrap> client;
  std::thread connector([&] { client = tcp_connect("127.0.0.1", listener.port(), 1, 5s); });
  std::unique_ptr<Bootstrap> server = listener.accept(0, 5s);
  connector.join();
  const std::string hello = "hello";
  client->send(std::as_bytes(std::span(hello)));
  EXPECT_EQ(server->receive_text(5s), hello);
  const std::string empty;
  server->send(std::as_bytes(std::span(empty)));
  EXPECT_EQ(client->receive_text(5s), "");
}

TEST(TcpBootstrap, AnInterruptTravelsBesideTheMessagesWithoutDisturbingThem) {
  TcpListener listener("127.0.0.1", 0);
  std::unique_ptr<Bootstrap> client;
  std::thread connector([&] { client = tcp_connect("127.0.0.1", listener.port(), 1, 5s); });
  std::unique_ptr<Bootstrap> server = listener.accept(0, 5s);
  connector.join();
  const std::string before = "before", after = "after";
  client->send(std::as_bytes(std::span(before)));
  client->interrupt_peer(42);
  client->send(std::as_bytes(std::span(after)));
  std::optional<std::uint8_t> tag;
  for (int i = 0; i < 500 && !tag; ++i) {
    tag = server->take_interrupt();
    if (!tag) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(tag.has_value());
  EXPECT_EQ(*tag, 42);
  EXPECT_FALSE(server->take_interrupt().has_value());  // once
  EXPECT_EQ(server->receive_text(5s), before);
  EXPECT_EQ(server->receive_text(5s), after);
  // Reading past an urgent byte nobody took drops it (Linux); the stream
  // stays whole. EpochChannel sends its in-band abort first, so a reader
  // that passes the interrupt has read the abort.
  client->interrupt_peer(7);
  client->send(std::as_bytes(std::span(after)));
  EXPECT_EQ(server->receive_text(5s), after);
  client->send(std::as_bytes(std::span(before)));
  EXPECT_EQ(server->receive_text(5s), before);
}

TEST(TcpBootstrap, AProgramThatIsNotUniperfIsRefusedByName) {
  TcpListener listener("127.0.0.1", 0);
  RawClient probe(listener.port());
  const char request[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  probe.write(request, sizeof request - 1);
  auto server = listener.accept(0, 5s);
  const std::string error = receive_error(*server, 5s);
  EXPECT_NE(error.find("not a uniperf process"), std::string::npos) << error;
  EXPECT_NE(error.find("GET / HT"), std::string::npos) << error;
}

TEST(TcpBootstrap, AHugeAnnouncedLengthIsRefusedBeforeAllocating) {
  TcpListener listener("127.0.0.1", 0);
  RawClient probe(listener.port());
  const unsigned char header[] = {'u', 'p', 'f', 1, 0xff, 0xff, 0xff, 0xff};
  probe.write(header, sizeof header);
  auto server = listener.accept(0, 5s);
  const std::string error = receive_error(*server, 5s);
  EXPECT_NE(error.find("4294967295 bytes, over the limit"), std::string::npos) << error;
}

TEST(TcpBootstrap, SilenceEndsAtTheDeadline) {
  TcpListener listener("127.0.0.1", 0);
  RawClient probe(listener.port());
  auto server = listener.accept(0, 5s);
  const auto start = std::chrono::steady_clock::now();
  const std::string error = receive_error(*server, 200ms);
  EXPECT_NE(error.find("did not answer within 200 ms"), std::string::npos) << error;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(TcpBootstrap, AMessageOverTheLimitIsNotSent) {
  TcpListener listener("127.0.0.1", 0);
  std::unique_ptr<Bootstrap> client;
  std::thread connector([&] { client = tcp_connect("127.0.0.1", listener.port(), 1, 5s); });
  auto server = listener.accept(0, 5s);
  connector.join();
  const Bytes big(kMaxFrameBytes + 1);
  EXPECT_THROW(client->send(big), BootstrapError);
}

TEST(TcpBootstrap, TheHeartbeatConnectionOpensBesideTheControlConnection) {
  TcpListener listener("127.0.0.1", 0);
  std::unique_ptr<Bootstrap> client;
  std::thread connector([&] {
    client = tcp_connect("127.0.0.1", listener.port(), 1, 5s);
    client->open_heartbeat(10s);
  });
  std::unique_ptr<Bootstrap> server = listener.accept(0, 5s);
  server->open_heartbeat(10s);  // the accepting side offers the port
  connector.join();
  ASSERT_GE(server->heartbeat_fd(), 0);
  ASSERT_GE(client->heartbeat_fd(), 0);
  EXPECT_NE(server->heartbeat_fd(), server->liveness_fd());
  // A byte either way, and the control stream is untouched by them.
  const char beat = 'h';
  ASSERT_EQ(::send(client->heartbeat_fd(), &beat, 1, MSG_NOSIGNAL), 1);
  ASSERT_EQ(::send(server->heartbeat_fd(), &beat, 1, MSG_NOSIGNAL), 1);
  char got = 0;
  EXPECT_EQ(::recv(server->heartbeat_fd(), &got, 1, 0), 1);
  EXPECT_EQ(got, 'h');
  EXPECT_EQ(::recv(client->heartbeat_fd(), &got, 1, 0), 1);
  const std::string hello = "hello";
  client->send(std::as_bytes(std::span(hello)));
  EXPECT_EQ(server->receive_text(5s), hello);
}

TEST(TcpBootstrap, ASeveredConnectionEndsEveryWaitWithTheReason) {
  TcpListener listener("127.0.0.1", 0);
  std::unique_ptr<Bootstrap> client;
  std::thread connector([&] { client = tcp_connect("127.0.0.1", listener.port(), 1, 5s); });
  std::unique_ptr<Bootstrap> server = listener.accept(0, 5s);
  connector.join();
  // A wait in progress (another thread severs it), then every later one.
  std::thread severer([&] {
    std::this_thread::sleep_for(200ms);
    server->sever("the peer stopped answering");
  });
  const auto started = std::chrono::steady_clock::now();
  try {
    server->receive(30s);
    ADD_FAILURE() << "no error";
  } catch (const BootstrapError& e) {
    EXPECT_STREQ(e.what(), "the peer stopped answering");
  }
  severer.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s);
  const std::string hello = "hello";
  EXPECT_THROW(server->send(std::as_bytes(std::span(hello))), BootstrapError);
  // The peer sees the connection end.
  EXPECT_THROW(client->receive(5s), BootstrapError);
}

}  // namespace
}  // namespace uniperf::bootstrap
