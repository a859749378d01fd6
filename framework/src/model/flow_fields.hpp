// The test knobs as data: one row per FlowSpec member (kFlowFields) and per
// Duration member (kRunFields). The suite reader, the result record (to and
// from JSON), the CSV view, the terminal table's title and the one-off
// command line (`uniperf lat|bw|rate`) all walk these rows, so a knob is
// named, typed, defaulted and documented once. Adding one is a row here plus
// the code that gives it meaning (the engine, and any check in the suite's
// build_flow); CONTRIBUTING.md walks through it.
//
// A row's `name` is its suite key, its record `params` key, its CSV column
// and (for flows) what the one-off flags set; those spellings are part of the
// record schema (results/record.cpp) and never change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "model/test_spec.hpp"

namespace uniperf::model {

enum class FieldKind : std::uint8_t {
  count,     ///< std::uint32_t; a whole number >= the row's minimum
  flag,      ///< bool; true / false
  choice,    ///< an enum; spelled by its to_string name
  fraction,  ///< double in [0, 1]; a suite may write a percentage ("0.5%")
  seconds,   ///< double >= 0; a suite may write a unit ("200ms", "1s")
  rate       ///< Rate; "10Gb/s" (bits), "100K/s" (messages), 0 (none)
};

/// How the one-off command line sets a knob.
struct CliFlag {
  std::string_view names;  ///< CLI11 spelling ("-t,--tx-depth,--window"); "" = no flag
  std::string_view sets;   ///< non-empty: a switch taking no value that sets this one
  std::string_view help;   ///< a switch's own help ("" = the row's)
};

/// Where a knob's CSV column goes. CSV readers may go by position, so
/// columns are only ever appended: a knob added after the CSV's first
/// release goes after every column of that release (the default).
enum class CsvColumn : std::uint8_t {
  identity,  ///< beside the test's name (op, pattern, direction)
  params,    ///< among the parameters of the first release
  appended,  ///< after the last column of the first release, before the loss columns
  /// After every column of record 1.8 (the last, MiB_per_s): a knob of 1.9
  /// or later, so a reader of the columns by position finds the older ones
  /// where they were.
  after_1_8
};

/// How the terminal table's one-line title shows a knob: prefix, the value's
/// text, suffix. Rows without a title part are left out of it.
struct TitlePart {
  std::string_view prefix, suffix;
  bool shown = false;
  bool unless_default = false;  ///< only when the value differs from FlowSpec{}'s
};

template <class Enum>
inline constexpr std::size_t kChoiceCount = 0;
template <>
inline constexpr std::size_t kChoiceCount<Op> = kOpCount;
template <>
inline constexpr std::size_t kChoiceCount<Pattern> = kPatternCount;
template <>
inline constexpr std::size_t kChoiceCount<Direction> = kDirectionCount;
template <>
inline constexpr std::size_t kChoiceCount<WindowMode> = kWindowModeCount;
template <>
inline constexpr std::size_t kChoiceCount<CompletionMode> = kCompletionModeCount;
template <>
inline constexpr std::size_t kChoiceCount<BufferMode> = kBufferModeCount;
template <>
inline constexpr std::size_t kChoiceCount<Role> = kRoleCount;
template <>
inline constexpr std::size_t kChoiceCount<RailPolicy> = kRailPolicyCount;
template <>
inline constexpr std::size_t kChoiceCount<Delivery> = kDeliveryCount;
template <>
inline constexpr std::size_t kChoiceCount<Reassembly> = kReassemblyCount;
template <>
inline constexpr std::size_t kChoiceCount<Source> = kSourceCount;
template <>
inline constexpr std::size_t kChoiceCount<Pages> = kPagesCount;
template <>
inline constexpr std::size_t kChoiceCount<StreamEnd> = kStreamEndCount;
template <>
inline constexpr std::size_t kChoiceCount<TargetWatch> = kTargetWatchCount;
template <>
inline constexpr std::size_t kChoiceCount<SendBuffers> = kSendBuffersCount;

/// One FlowSpec knob.
struct FlowField {
  std::string_view name;
  FieldKind kind = FieldKind::count;
  std::string_view help;  ///< one line: the suite reference and the flag's help
  std::uint32_t FlowSpec::*count = nullptr;
  bool FlowSpec::*flag = nullptr;
  double FlowSpec::*fraction = nullptr;
  double FlowSpec::*seconds = nullptr;
  Rate FlowSpec::*rate = nullptr;
  std::size_t (*get_choice)(const FlowSpec&) = nullptr;  ///< the enum's index
  void (*set_choice)(FlowSpec&, std::size_t) = nullptr;
  std::string_view (*choice_name)(std::size_t) = nullptr;
  std::size_t choice_count = 0;
  std::uint32_t minimum = 0;           ///< count: the least value a suite may give
  std::uint32_t maximum = UINT32_MAX;  ///< count: the most a suite may give
  /// No built-in default: a suite must give it (op).
  bool required = false;
  /// Its default follows from other knobs (build_flow computes it), so the
  /// built-in layer holds none.
  bool derived = false;
  CsvColumn csv = CsvColumn::appended;
  /// Added to the record after schema 1.0: a reader takes its absence as
  /// the default.
  bool optional_in_record = false;
  /// A count of bytes: a suite may write it with a unit ("64M", "4K").
  bool in_bytes = false;
  CliFlag cli;
  TitlePart title;

  // Builders, so that a row of the table reads as a sentence.
  constexpr FlowField at_least(std::uint32_t least) const {
    FlowField f = *this;
    f.minimum = least;
    return f;
  }
  constexpr FlowField at_most(std::uint32_t most) const {
    FlowField f = *this;
    f.maximum = most;
    return f;
  }
  constexpr FlowField counts_bytes() const {
    FlowField f = *this;
    f.in_bytes = true;
    return f;
  }
  constexpr FlowField must_be_given() const {
    FlowField f = *this;
    f.required = true;
    return f;
  }
  constexpr FlowField derived_default() const {
    FlowField f = *this;
    f.derived = true;
    return f;
  }
  /// Says what is measured: the CSV puts it beside the test's name.
  constexpr FlowField names_the_test() const {
    FlowField f = *this;
    f.csv = CsvColumn::identity;
    return f;
  }
  /// A column of the CSV's first release, among its parameters.
  constexpr FlowField csv_after_1_8() const {
    FlowField f = *this;
    f.csv = CsvColumn::after_1_8;
    return f;
  }
  constexpr FlowField csv_since_1_0() const {
    FlowField f = *this;
    f.csv = CsvColumn::params;
    return f;
  }
  constexpr FlowField added_after_1_0() const {
    FlowField f = *this;
    f.optional_in_record = true;
    return f;
  }
  constexpr FlowField flag_named(std::string_view names) const {
    FlowField f = *this;
    f.cli.names = names;
    return f;
  }
  constexpr FlowField switch_named(std::string_view names, std::string_view sets,
                                   std::string_view switch_help) const {
    FlowField f = *this;
    f.cli = {names, sets, switch_help};
    return f;
  }
  constexpr FlowField in_title(std::string_view prefix, std::string_view suffix = "",
                               bool unless_default = false) const {
    FlowField f = *this;
    f.title = {prefix, suffix, true, unless_default};
    return f;
  }

  /// The value's canonical text: the decimal number (a fraction in its
  /// shortest round-trip form), "true" / "false", or the enum's name (the
  /// suite's, the record's and the CSV's spelling).
  std::string text(const FlowSpec& flow) const;
  /// Sets the value from its canonical text; false (and no change) when the
  /// text is not one (the suite reader gives the friendlier message).
  bool set_text(FlowSpec& flow, std::string_view text) const;
  /// A choice's names, in enum order; empty for other kinds.
  std::vector<std::string_view> choices() const;
  /// The names joined: "poll | event" with " | ".
  std::string choice_list(std::string_view separator) const;
  /// The built-in default: the value in a default-constructed FlowSpec.
  std::string default_text() const { return text(FlowSpec{}); }
};

namespace field_detail {
template <auto Member>
using MemberType = std::remove_cvref_t<decltype(std::declval<FlowSpec&>().*Member)>;

template <auto Member>
std::size_t get_choice(const FlowSpec& flow) {
  return static_cast<std::size_t>(flow.*Member);
}
template <auto Member>
void set_choice(FlowSpec& flow, std::size_t index) {
  flow.*Member = static_cast<MemberType<Member>>(index);
}
template <class Enum>
std::string_view choice_name(std::size_t index) {
  return to_string(static_cast<Enum>(index));
}
}  // namespace field_detail

/// What every kind of field starts from: its name, kind and help.
constexpr FlowField named_field(std::string_view name, FieldKind kind, std::string_view help) {
  FlowField f;
  f.name = name;
  f.kind = kind;
  f.help = help;
  return f;
}

constexpr FlowField count_field(std::string_view name, std::uint32_t FlowSpec::*member,
                                std::string_view help) {
  FlowField f = named_field(name, FieldKind::count, help);
  f.count = member;
  return f;
}

constexpr FlowField flag_field(std::string_view name, bool FlowSpec::*member,
                               std::string_view help) {
  FlowField f = named_field(name, FieldKind::flag, help);
  f.flag = member;
  return f;
}

constexpr FlowField fraction_field(std::string_view name, double FlowSpec::*member,
                                   std::string_view help) {
  FlowField f = named_field(name, FieldKind::fraction, help);
  f.fraction = member;
  return f;
}

constexpr FlowField seconds_field(std::string_view name, double FlowSpec::*member,
                                  std::string_view help) {
  FlowField f = named_field(name, FieldKind::seconds, help);
  f.seconds = member;
  return f;
}

constexpr FlowField rate_field(std::string_view name, Rate FlowSpec::*member,
                               std::string_view help) {
  FlowField f = named_field(name, FieldKind::rate, help);
  f.rate = member;
  return f;
}

template <auto Member>
constexpr FlowField choice_field(std::string_view name, std::string_view help) {
  using Enum = field_detail::MemberType<Member>;
  static_assert(kChoiceCount<Enum> > 0, "name the enum's value count in kChoiceCount");
  FlowField f = named_field(name, FieldKind::choice, help);
  f.get_choice = &field_detail::get_choice<Member>;
  f.set_choice = &field_detail::set_choice<Member>;
  f.choice_name = &field_detail::choice_name<Enum>;
  f.choice_count = kChoiceCount<Enum>;
  return f;
}

/// Every flow knob, in FlowSpec order (the record's, the CSV's and the
/// title's order). Semantics that tie knobs together (latency's window of 1,
/// the derived defaults, post_list dividing the window) live in the suite's
/// build_flow; what a knob does, in the engine.
///
/// The queue knobs and the endpoint count have ceilings far above any
/// transport's queues, so that a value such as 2^32-1 is refused while the
/// suite is read (naming the key) instead of overflowing a depth or asking
/// for gigabytes of rings; what a plugin's queues really hold is its
/// Capabilities' business (max_send_depth, max_recv_depth), and the engine
/// SKIPs a test that needs more.
inline constexpr std::uint32_t kMaxQueueKnob = 1u << 20;
inline constexpr std::uint32_t kMaxEndpoints = 4096;
/// 2^24 rows of 48 bytes: 768 MiB per flow, more than any study needs.
inline constexpr std::uint32_t kMaxTraceRows = 1u << 24;
/// A latency flow keeps a sample per measured iteration: 2^24 (128 MiB of
/// stamps) is the most one flow may ask for; longer runs give a duration.
inline constexpr std::uint32_t kMaxFlowIterations = 1u << 24;

inline constexpr FlowField kFlowFields[] = {
    choice_field<&FlowSpec::op>("op", "the operation")
        .must_be_given()
        .names_the_test()
        .flag_named("--op")
        .in_title(""),
    choice_field<&FlowSpec::pattern>("pattern", "what is measured").names_the_test().in_title(" "),
    choice_field<&FlowSpec::direction>("direction", "one way, or both at once (not for latency)")
        .names_the_test()
        .switch_named("-b,--bidirectional", "bi", "Both directions at once")
        .in_title(" "),
    count_field("window", &FlowSpec::window,
                "Ops in flight per endpoint (latency: 1; built-in: latency 1, else 64)")
        .csv_since_1_0()
        .at_least(1)
        .at_most(kMaxQueueKnob)
        .flag_named("-t,--tx-depth,--window")
        .in_title(", window "),
    choice_field<&FlowSpec::window_mode>(
        "window_mode",
        "streaming refills the window on every completion; window_ack waits for the whole "
        "window and an ack (not for latency)")
        .csv_since_1_0()
        .flag_named("--window-mode")
        .in_title(" (", ")"),
    count_field("signal_every", &FlowSpec::signal_every,
                "Request a completion every N posts (0 or absent: max(1, window/2); <= window, "
                "except in latency)")
        .csv_since_1_0()
        .derived_default()
        .at_most(kMaxQueueKnob)
        .flag_named("--signal-every")
        .in_title(", signal every "),
    count_field("cq_moderation", &FlowSpec::cq_moderation,
                "Completions per poll / wake-up (absent: window/signal_every)")
        .csv_since_1_0()
        .at_least(1)
        .derived_default()
        .at_most(kMaxQueueKnob)
        .flag_named("-Q,--cq-mod")
        .in_title(", cq moderation "),
    choice_field<&FlowSpec::completion>("completion", "poll, or sleep on completion events")
        .csv_since_1_0()
        .switch_named("-e,--events", "event", "Sleep on completion events instead of polling")
        .in_title(", ", " completion"),
    count_field("rx_depth", &FlowSpec::rx_depth,
                "Receives pre-posted (0 or absent: max(2 * window, 64))")
        .csv_since_1_0()
        .derived_default()
        .at_most(kMaxQueueKnob)
        .flag_named("-r,--rx-depth"),
    count_field("rx_replenish", &FlowSpec::rx_replenish,
                "Re-post receives in batches of N (<= rx_depth)")
        .csv_since_1_0()
        .at_least(1)
        .at_most(kMaxQueueKnob)
        .flag_named("--rx-replenish"),
    count_field("post_list", &FlowSpec::post_list,
                "Work requests chained per post (divides window and signal_every)")
        .csv_since_1_0()
        .at_least(1)
        .at_most(kMaxQueueKnob)
        .flag_named("-l,--post-list,--post_list"),
    count_field("inline", &FlowSpec::inline_size, "Inline threshold in bytes")
        .csv_since_1_0()
        .flag_named("-I,--inline,--inline_size"),
    count_field("endpoints", &FlowSpec::endpoints, "Endpoints (QPs) per flow")
        .csv_since_1_0()
        .at_least(1)
        .at_most(kMaxEndpoints)
        .flag_named("-q,--qps,--qp,--endpoints"),
    choice_field<&FlowSpec::buffers>("buffers",
                                     "cycle (a ring of window slots, perftest) | single (one "
                                     "slot, ucx_perftest / OSU)")
        .csv_since_1_0()
        .added_after_1_0()
        .flag_named("--buffers")
        .in_title(", ", " buffer", true),
    flag_field("validate", &FlowSpec::validate, "Fill and check payloads")
        .csv_since_1_0()
        .switch_named("--validate", "true", ""),
    fraction_field("max_loss", &FlowSpec::max_loss,
                   "Unreliable transports: the share of a stream's messages that may be lost "
                   "(e.g. 0.1% or 0.001) before the record is an error; 1: loss is only reported")
        .added_after_1_0()
        .flag_named("--max-loss")
        .in_title(", max loss ", "", true),
    count_field("trace", &FlowSpec::trace,
                "Per-request trace of the measured phase (docs/traces.md): 0 none, 1 every "
                "request, N every Nth")
        .added_after_1_0()
        .flag_named("--trace")
        .in_title(", trace 1 in ", "", true),
    count_field("trace_max", &FlowSpec::trace_max,
                "The most trace rows a flow keeps per size (48 bytes each, allocated before the "
                "loop); later requests are counted, not kept")
        .at_least(1)
        .at_most(kMaxTraceRows)
        .added_after_1_0()
        .flag_named("--trace-max"),
    choice_field<&FlowSpec::role>("role",
                                  "measured (its own length) | load (a stream that runs until "
                                  "the test's measured flows are done)")
        .added_after_1_0()
        .in_title(", ", "", true),
    count_field("flow_size", &FlowSpec::size,
                "This flow's own message size, at every size of the test (a test of several "
                "flows); 0: the test's sizes")
        .counts_bytes()
        .at_most(1u << 30)
        .added_after_1_0()
        .in_title(", own size ", "", true),
    count_field("flow_iterations", &FlowSpec::iterations,
                "This flow's own measured iterations (a test of several flows); 0: the test's "
                "run length")
        .at_most(kMaxFlowIterations)
        .added_after_1_0()
        .in_title(", own iterations ", "", true),
    seconds_field("flow_duration", &FlowSpec::seconds,
                  "This flow's own duration (a test of several flows, e.g. 200ms); 0: the "
                  "test's run length")
        .added_after_1_0()
        .in_title(", own duration ", " s", true),
    seconds_field("start_offset", &FlowSpec::start_offset,
                  "Seconds this flow starts after the test's flows are released together "
                  "(e.g. 100ms)")
        .added_after_1_0()
        .in_title(", starts after ", " s", true),
    seconds_field("latency_gap", &FlowSpec::latency_gap,
                  "Pause between one latency iteration's end and the next one's start (e.g. "
                  "10us; perftest's --latency_gap), not in any sample; latency tests only")
        .added_after_1_0()
        .csv_after_1_8()
        .flag_named("--latency-gap,--latency_gap")
        .in_title(", gap ", " s", true),
    rate_field("rate_limit", &FlowSpec::rate_limit,
               "The most a stream posts per flow: bits (10Gb/s, 500Mb/s) or messages (100K/s) "
               "per second, paced by the engine outside the post path; 0: as fast as it goes")
        .added_after_1_0()
        .csv_after_1_8()
        .flag_named("--rate-limit,--rate_limit")
        .in_title(", at most ", "", true),
    flag_field("keep_samples", &FlowSpec::keep_samples,
               "Keep every latency sample, in the order the iterations ran, in the run's "
               "samples file (RESULTS.samples.csv; perftest's -H); latency tests only")
        .added_after_1_0()
        .csv_after_1_8()
        .switch_named("--keep-samples,--report-histogram", "true",
                      "Keep every latency sample in RESULTS.samples.csv (perftest's -H)"),
    choice_field<&FlowSpec::rail_policy>(
        "rail_policy",
        "over a config's rails (docs/rails.md): bind (flow k on rail k mod R; bi: a direction "
        "per rail) | stripe (messages above stripe_threshold split evenly over every rail) | "
        "round_robin (whole messages alternate)")
        .added_after_1_0()
        .csv_after_1_8()
        .flag_named("--rail-policy")
        .in_title(", rails ", "", true),
    count_field("stripe_threshold", &FlowSpec::stripe_threshold,
                "rail_policy stripe: messages above this many bytes are split over the rails; "
                "at or below, whole on rail 0")
        .counts_bytes()
        .at_most(1u << 30)
        .added_after_1_0()
        .csv_after_1_8()
        .flag_named("--stripe-threshold"),
    count_field("fragment", &FlowSpec::fragment,
                "A pipelined transfer (docs/pipeline.md): each message goes as fragments of "
                "this many bytes, `window` of them in flight; 0: whole messages")
        .counts_bytes()
        .at_most(1u << 30)
        .added_after_1_0()
        .csv_after_1_8()
        .flag_named("--fragment")
        .in_title(", fragments of ", " B", true),
    choice_field<&FlowSpec::delivery>(
        "delivery",
        "fragment > 0: direct (written in place, op write) | copy (sent into receive buffers "
        "and copied into place, op send)")
        .added_after_1_0()
        .csv_after_1_8()
        .flag_named("--delivery")
        .in_title(", ", "", true),
    choice_field<&FlowSpec::reassembly>(
        "reassembly",
        "delivery copy: cut_through (each fragment copied as it lands) | store_and_forward "
        "(the whole message copied once its last fragment landed)")
        .added_after_1_0()
        .csv_after_1_8()
        .flag_named("--reassembly")
        .in_title(", ", "", true),
    choice_field<&FlowSpec::source>(
        "source",
        "fragment > 0: zero_copy (posted from the message buffer) | staged (copied into a "
        "registered bounce buffer first)")
        .added_after_1_0()
        .csv_after_1_8()
        .flag_named("--source")
        .in_title(", ", "", true),
    choice_field<&FlowSpec::pages>(
        "pages",
        "normal (base pages, or the plugin's own allocation) | huge (the buffers on "
        "MAP_HUGETLB pages that vm.nr_hugepages reserved; SKIPPED where none can be had)")
        .added_after_1_0()
        .csv_after_1_8()
        .flag_named("--pages")
        .in_title(", ", " pages", true),
    choice_field<&FlowSpec::stream_end>(
        "stream_end",
        "streams: last_completion (the interval ends at the last completion, perftest) | "
        "delivered (then waits until the transport says the peer holds every byte, "
        "ucx_perftest; SKIPPED where the plugin cannot tell)")
        .added_after_1_0()
        .csv_after_1_8()
        .flag_named("--stream-end")
        .in_title(", ends ", "", true),
    choice_field<&FlowSpec::target_watch>(
        "target_watch",
        "write streams: none (the target only drives its transport, perftest) | last_byte "
        "(it also reads the message's last byte in its buffer's first slot, as "
        "ucx_perftest's put_bw receiver waits there for its last sequence number)")
        .added_after_1_0()
        .csv_after_1_8()
        .flag_named("--target-watch")
        .in_title(", target watches ", "", true),
    choice_field<&FlowSpec::send_buffers>(
        "send_buffers",
        "pattern (written with the test's bytes before the run) | untouched (never "
        "written: fresh memory reads as the kernel's zero page, one cached page, as "
        "ucx_perftest's send buffers; copies from it are cheaper than from real data)")
        .added_after_1_0()
        .csv_after_1_8()
        .flag_named("--send-buffers")
        .in_title(", send buffers ", "", true),
};

/// A rate's text: "10Gb/s", "500Mb/s", "1.5e3b/s" (bits per second, the
/// prefix decimal), "100K/s", "2M/s", "5000/s" (messages per second), or
/// "0" (none); nullopt for anything else.
std::optional<Rate> parse_rate(std::string_view text);
/// Its canonical text, which parse_rate() reads back: the largest of
/// G, M, K that keeps the number at least 1 ("10Gb/s", "250K/s"), or "0".
std::string rate_text(const Rate& rate);

/// The row named `name`; nullptr when there is none.
const FlowField* find_flow_field(std::string_view name);

/// A fraction knob's value: a number in [0, 1] or a percentage ("0.5%");
/// nullopt for anything else.
std::optional<double> parse_fraction(std::string_view text);

// ---------------------------------------------------------------- run length

enum class RunKind : std::uint8_t {
  count64,  ///< std::uint64_t
  count32,  ///< std::uint32_t
  seconds,  ///< double; the suite takes "2s", "500ms", "1m" or a number
  flag      ///< bool
};

/// One Duration knob. Its suite key and record key differ where the record
/// names the unit (duration -> duration_s). How the keys combine (iterations
/// XOR duration, margin only with a duration) is the suite's
/// resolve_run_length.
struct RunField {
  std::string_view suite_key;   ///< "" when a suite cannot set it directly
  std::string_view record_key;  ///< in the record's `params`
  RunKind kind = RunKind::count64;
  std::string_view help;
  std::uint64_t Duration::*count64 = nullptr;
  std::uint32_t Duration::*count32 = nullptr;
  double Duration::*seconds = nullptr;
  bool Duration::*flag = nullptr;
  bool in_csv = false;              ///< a CSV column named record_key
  bool optional_in_record = false;  ///< added after schema 1.0
  std::string_view cli_names;       ///< the one-off flag; "" = none
};

/// Every run-length knob, in the record's and the CSV's order.
inline const RunField kRunFields[] = {
    {.suite_key = "iterations",
     .record_key = "iterations",
     .kind = RunKind::count64,
     .help = "Measured iterations (operations per endpoint), XOR duration",
     .count64 = &Duration::iterations,
     .in_csv = true,
     .cli_names = "-n,--iters"},
    {.suite_key = "duration",
     .record_key = "duration_s",
     .kind = RunKind::seconds,
     .help = "Run for a time instead (e.g. 5s)",
     .seconds = &Duration::seconds,
     .in_csv = true,
     .cli_names = "-D,--duration"},
    {.suite_key = "margin",
     .record_key = "margin_s",
     .kind = RunKind::seconds,
     .help = "Duration mode: seconds cut at both ends, untimed (e.g. 1s)",
     .seconds = &Duration::margin,
     .in_csv = true,
     .cli_names = "-f,--margin"},
    {.suite_key = "warmup",
     .record_key = "warmup_iterations",
     .kind = RunKind::count64,
     .help = "Warm-up iterations",
     .count64 = &Duration::warmup_iterations,
     .in_csv = true,
     .cli_names = "-w,--warmup"},
    {.suite_key = "trials",
     .record_key = "trials",
     .kind = RunKind::count32,
     .help = "Times each size is measured",
     .count32 = &Duration::trials,
     .optional_in_record = true,
     .cli_names = ""},
    {.suite_key = "",
     .record_key = "forever",
     .kind = RunKind::flag,
     .help = "duration: forever / --run-infinitely",
     .flag = &Duration::forever,
     .optional_in_record = true,
     .cli_names = ""},
};

}  // namespace uniperf::model
