#!/usr/bin/env python3
"""ctest lab_rails_check: rails_check.py's rules on made-up records (no
guest boots). Each rail's request count must be what its policy says (a
striped message's piece on each rail, a whole message on one, bind_bi's
initiator on rail 0) however the streams were paced; a timed stream's
shares over shaped links follow each rail's own pace and are not judged
against each other, but a rail that carried nothing fails; and a missing
two-rail gain fails only where the links paced the streams."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rails_check  # noqa: E402

LINK_MB = 2.0  # each link, each way
LINKS = {"eth0": {"tx": 10**9, "rx": 10**9}, "eth1": {"tx": 10**9, "rx": 10**9},
         "rate_bits_per_s": LINK_MB * 8e6}


def record(config, test, size, per_rail=None, seconds=2.0, mb_per_s=None, requests=None,
           messages=None, iterations=None, **params):
    """A record moving `per_rail` bytes (its rails' sum, as the checks
    demand), or `mb_per_s` for `seconds` over one rail. Its rails' request
    counts and its messages follow from the bytes as the policy makes them
    (a piece of each message per rail above the threshold, else whole
    messages; bind_bi's initiator on rail 0) unless `requests`,
    `messages` or `iterations` say otherwise."""
    pieces = test.startswith("stripe") and size > rails_check.THRESHOLD
    unit = size // 2 if pieces else size
    if per_rail is not None:
        per_rail = [b - b % unit for b in per_rail]  # whole requests
        requests = requests or [b // unit for b in per_rail]
    moved = sum(per_rail) if per_rail else int((mb_per_s or 1.0) * 1e6 * seconds)
    if messages is None:
        messages = (requests[0] if pieces else sum(requests)) if requests else moved // size
    if iterations is None:
        iterations = requests[0] if test == "bind_bi" and requests else messages
    r = {"config": config, "test": test, "size": size, "status": "ok", "params": params,
         "iterations_run": iterations,
         "bandwidth": {"bytes": moved, "seconds": seconds, "messages": messages,
                       "MB_per_s": mb_per_s if mb_per_s is not None else moved / seconds / 1e6}}
    if per_rail is not None:
        r["rails"] = {"per_rail": [{"bytes": b, "requests": q}
                                   for b, q in zip(per_rail, requests)]}
    return r


def run(bind_bi_shares, one_rail_mb, two_rails_mb, round_robin_4k=None):
    """A hosts run: the 2-rail config with bind_bi at `bind_bi_shares`
    (bytes per rail in 2 s, both ways), stripe and round_robin at
    `two_rails_mb` (both rails together; round_robin's 4 KiB shares
    `round_robin_4k` if given), its 1-rail twin at `one_rail_mb`, and the
    delivered streams."""
    two, one = "x-2rails", "x-1rail"
    timed = {"duration_s": 2.0}
    got = []
    for size in (4096, 65536):
        half = int(two_rails_mb * 1e6)  # one rail's bytes: 2 s at half of two_rails_mb
        below = size < rails_check.THRESHOLD
        got += [
            record(two, "stripe", size, [2 * half, 0] if below else [half, half]),
            record(two, "round_robin", size,
                   round_robin_4k if below and round_robin_4k else [half, half], **timed),
            record(two, "bind_bi", size, bind_bi_shares, direction="bi", **timed),
            record(two, "stripe_lat", size, [8 * size, 0] if below else [4 * size, 4 * size]),
        ]
        for test in ("stripe", "round_robin", "bind_bi"):
            got.append(record(one, test, size, mb_per_s=one_rail_mb))
    got.append(record(one, "delivered", 65536, mb_per_s=1.9, stream_end="delivered"))
    got.append(record(one, "completed", 65536, mb_per_s=2.5))
    return rails_check.check_hosts(got, LINKS)


class HostsRules(unittest.TestCase):
    def test_link_paced_run_with_even_shares_and_a_gain_passes(self):
        self.assertEqual(run([3_800_000, 3_700_000], one_rail_mb=1.9, two_rails_mb=3.8), [])

    def test_timed_shares_follow_each_rails_pace(self):
        # As in a CI run's lab: bind_bi's directions at 1.57 and 2.01 MB/s
        # over 2 MB/s links, each paced on its own; the policy held exactly.
        self.assertEqual(run([3_670_016, 4_718_592], one_rail_mb=1.9, two_rails_mb=3.8), [])

    def test_link_paced_two_rails_must_gain(self):
        problems = run([3_800_000, 3_700_000], one_rail_mb=1.9, two_rails_mb=1.0)
        self.assertTrue(any("is under" in p for p in problems), problems)

    def test_cpu_paced_shares_and_gain_are_not_judged(self):
        # 1.245 and 0.885 MB in 2 s: 0.44 MB/s is under LINK_BOUND of 2 MB/s.
        self.assertEqual(run([1_245_184, 884_736], one_rail_mb=0.9, two_rails_mb=0.5), [])

    def test_cpu_paced_two_rails_are_held_to_one_rails_figure(self):
        # As in a CI run's lab: one rail at 1.78 MB/s, two at 2.03 together
        # (1.02 each, under LINK_BOUND): not the links' gain, but no loss.
        self.assertEqual(run([3_800_000, 3_700_000], one_rail_mb=1.78, two_rails_mb=2.03), [])
        problems = run([3_800_000, 3_700_000], one_rail_mb=1.78, two_rails_mb=1.6)
        self.assertTrue(any("is under 1.0x" in p for p in problems), problems)

    def test_alternating_rails_at_their_own_pace_pass(self):
        # As in a CI run's lab: 4 KiB alternated over two rails at about
        # 1.28 and 1.76 MB/s.
        self.assertEqual(run([3_800_000, 3_700_000], one_rail_mb=1.9, two_rails_mb=3.8,
                             round_robin_4k=[2_560_000, 3_520_000]), [])

    def test_timed_rail_that_carried_nothing_fails(self):
        problems = run([1_245_184, 0], one_rail_mb=0.9, two_rails_mb=0.5)
        self.assertTrue(any("carried nothing" in p for p in problems), problems)


def pair(**broken):
    """check_pair over one process pair's counted streams (no shaped link),
    with the record `broken["test"]` at 64 KiB built from the other keys."""
    got = []
    for size in (4096, 65536):
        below = size <= rails_check.THRESHOLD
        shares = {"stripe": [200 * size, 0] if below else [100 * size, 100 * size],
                  "round_robin": [100 * size, 100 * size],
                  "bind_bi": [200 * size, 200 * size],
                  "stripe_lat": [100 * size, 0] if below else [50 * size, 50 * size]}
        for test, per_rail in shares.items():
            if test == broken.get("test") and size == 65536:
                args = {k: v for k, v in broken.items() if k != "test"}
                got.append(record("x-2rails", test, size, **{"per_rail": per_rail, **args}))
            else:
                got.append(record("x-2rails", test, size, per_rail))
    return rails_check.check_pair(got)


class PairRules(unittest.TestCase):
    def test_every_policy_as_it_says_passes(self):
        self.assertEqual(pair(), [])

    def test_a_striped_message_whole_on_one_rail_fails(self):
        problems = pair(test="stripe", requests=[200, 0])
        self.assertTrue(any("piece on each rail" in p for p in problems), problems)

    def test_round_robin_sending_a_message_twice_fails(self):
        # 200 requests for 150 messages: some went over both rails.
        problems = pair(test="round_robin", messages=150)
        self.assertTrue(any("whole over one rail" in p for p in problems), problems)

    def test_bind_bi_with_the_initiator_off_rail_0_fails(self):
        problems = pair(test="bind_bi", per_rail=[150 * 65536, 250 * 65536], iterations=250)
        self.assertTrue(any("bound to rail 0" in p for p in problems), problems)

    def test_a_counted_stream_with_uneven_shares_fails(self):
        problems = pair(test="round_robin", per_rail=[120 * 65536, 80 * 65536])
        self.assertTrue(any("even shares" in p for p in problems), problems)

    def test_bytes_that_are_not_whole_requests_fail(self):
        problems = pair(test="round_robin", requests=[99, 101])
        self.assertTrue(any("not whole requests" in p for p in problems), problems)


if __name__ == "__main__":
    unittest.main()
