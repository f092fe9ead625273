//! IceNIC's register interface, completions, receive buffer and interrupt line
//! (docs/models/icenic.md).

use nanopu_nic::icenic::{reg, send_request, IceAction, IceNic, IceParams, RateLimit};

const BASE: u64 = 0x1001_6000;
/// The default queue depth: the nanoPU artifact's IceNIC SoC's (docs/models/icenic.md).
const D: u64 = 64;

fn nic() -> IceNic {
    IceNic::new(IceParams::default(), 0x0203_0405_0607)
}

/// A NIC with icenet `NICConfig`'s own sizes (10-deep queues, 379 flits).
fn nic_config_sized() -> IceNic {
    IceNic::new(IceParams { queue_depth: 10, rx_buffer_flits: 379, ..IceParams::default() }, 0x0203_0405_0607)
}

#[test]
fn the_default_sizes_are_the_artifact_socs() {
    // `icenet.WithIceNIC` of l-nic/icenet 512c87e: ctrlQueueDepth 64, inBufFlits 1,800.
    let p = IceParams::default();
    assert_eq!((p.queue_depth, p.rx_buffer_flits), (64, 1800));
    assert_eq!(counts(&mut nic()), [D, D, 0, 0]);
}

/// The four counts at 0x14: send space, receive space, send completions, receive completions.
fn counts(n: &mut IceNic) -> [u64; 4] {
    let v = n.read(0, BASE + reg::COUNTS, 4, &mut Vec::new()).unwrap();
    [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24]
}

fn frame(len: usize, tag: u8) -> Vec<u8> {
    (0..len).map(|i| tag.wrapping_add(i as u8)).collect()
}

#[test]
fn a_send_request_is_read_by_dma_sent_and_counted_once() {
    let mut n = nic();
    let mut out = Vec::new();
    n.write(100, BASE + reg::SEND_REQ, 8, send_request(0x8000_1000, 64), &mut out).unwrap();
    n.write(101, BASE + reg::SEND_REQ, 8, send_request(0x8000_2000, 72), &mut out).unwrap();
    // One request at a time: the second waits in the queue.
    assert_eq!(out, vec![IceAction::Gets { at: 100, addr: 0x8000_1000, len: 64 }]);
    assert_eq!(counts(&mut n), [D - 1, D, 0, 0]);
    out.clear();
    // Memory answers in 30 cycles: one Get at 100, its 8 flits in by 138.
    n.gets_timed(30, &mut out);
    let issued = IceAction::GetsIssued { at: 100, addr: 0x8000_1000, len: 64 };
    assert_eq!(out, vec![issued, IceAction::DataIn { at: 138 }]);
    out.clear();
    n.gets_issued(100, frame(64, 1), &mut out);
    assert!(out.contains(&IceAction::Gets { at: 100, addr: 0x8000_2000, len: 72 }));
    assert_eq!(counts(&mut n), [D, D, 1, 0]);
    out.clear();
    n.data_in(138, &mut out);
    assert_eq!(out, vec![IceAction::Transmit { at: 142, frame: frame(64, 1) }]);
    // The completion register pops one completion per read, then reads 0.
    assert_eq!(n.read(140, BASE + reg::SEND_COMP, 1, &mut out).unwrap(), 1);
    assert_eq!(n.read(141, BASE + reg::SEND_COMP, 1, &mut out).unwrap(), 0);
    assert_eq!(n.counters.frames_sent, 1);
}

/// The cycle of the first action of a kind among `out`.
fn cycle_of(out: &[IceAction], issued: bool) -> u64 {
    let f = |a: &IceAction| match (a, issued) {
        (IceAction::GetsIssued { at, .. }, true) | (IceAction::DataIn { at }, false) => Some(*at),
        _ => None,
    };
    out.iter().find_map(f).unwrap()
}

#[test]
fn a_send_completes_when_its_last_get_issues_before_its_data_is_back() {
    // icenet `StreamReaderCore`: the completion (`io.resp`) once the last Get has fired;
    // 1,024 bytes are 16 Gets, one a cycle, 8 in flight, each line's data 8 flits.
    let mut n = nic();
    let mut out = Vec::new();
    n.write(0, BASE + reg::SEND_REQ, 8, send_request(0x8000_0000, 1024), &mut out).unwrap();
    n.write(1, BASE + reg::SEND_REQ, 8, send_request(0x8000_1000, 1024), &mut out).unwrap();
    out.clear();
    n.gets_timed(30, &mut out);
    // Get 8 waits for line 0's data (30 + 8), Get 15 for line 7's: 30 + 64.
    let (last_get, data) = (cycle_of(&out, true), cycle_of(&out, false));
    assert_eq!((last_get, data), (94, 30 + 128));
    out.clear();
    n.gets_issued(last_get, frame(1024, 1), &mut out);
    assert_eq!(counts(&mut n)[2], 1, "counted before the data is back");
    assert!(n.irq_level() || out.contains(&IceAction::Update { at: 94 }));
    // The reader took the next request at once, while the first frame's data streams.
    assert!(out.contains(&IceAction::Gets { at: 94, addr: 0x8000_1000, len: 1024 }));
    out.clear();
    n.gets_timed(30, &mut out);
    // Its Gets fill the slots the first frame frees (its first at 102, when line 8 of the
    // first frame is back), its data follows the first's (from 158), and its Get 15 waits
    // for its own line 7.
    assert_eq!(cycle_of(&out, false), 158 + 128);
    assert_eq!(cycle_of(&out, true), 158 + 64);
}
#[test]
fn a_received_frame_waits_for_a_receive_request_then_completes_with_its_length() {
    let mut n = nic();
    let mut out = Vec::new();
    n.frame_arrived(50, frame(60, 7), &mut out);
    assert!(out.is_empty(), "no receive request yet: the frame waits in the buffer");
    assert_eq!(n.buffered(), 1);
    n.write(60, BASE + reg::RECV_REQ, 8, 0x8000_4000, &mut out).unwrap();
    assert_eq!(out, vec![IceAction::DmaWrite { at: 60, addr: 0x8000_4000, frame: frame(60, 7), stream: 8 }]);
    assert_eq!(counts(&mut n), [D, D, 0, 0]);
    out.clear();
    n.write_done(90, 60, &mut out);
    assert_eq!(counts(&mut n), [D, D, 0, 1]);
    assert_eq!(n.read(95, BASE + reg::RECV_COMP, 2, &mut out).unwrap(), 60);
    assert_eq!(n.read(96, BASE + reg::RECV_COMP, 2, &mut out).unwrap(), 0);
}

#[test]
fn the_receive_buffer_drops_frames_when_full_and_counts_them() {
    let mut n = nic();
    let mut out = Vec::new();
    // 1,800 flits of 8 bytes: 225 frames of 64 bytes (8 flits each) fit, the rest are dropped.
    for i in 0..240 {
        n.frame_arrived(i, frame(64, i as u8), &mut out);
    }
    assert_eq!((n.buffered(), n.counters.dropped_full), (225, 15));
    // Draining one frame frees its flits: the next arrival fits again.
    n.write(300, BASE + reg::RECV_REQ, 8, 0x8000_0000, &mut out).unwrap();
    n.frame_arrived(301, frame(64, 99), &mut out);
    assert_eq!((n.buffered(), n.counters.dropped_full), (225, 15));
    // Too long and too short frames are dropped apart.
    n.frame_arrived(302, frame(1517, 0), &mut out);
    n.frame_arrived(303, frame(15, 0), &mut out);
    assert_eq!(n.counters.dropped_size, 2);
}

#[test]
fn the_interrupt_line_follows_completions_through_the_mask() {
    let mut n = nic();
    let mut out = Vec::new();
    n.write(0, BASE + reg::RECV_REQ, 8, 0x8000_0000, &mut out).unwrap();
    n.frame_arrived(10, frame(64, 0), &mut out);
    n.write_done(40, 64, &mut out);
    assert!(!n.irq_level(), "masked");
    n.write(50, BASE + reg::INTMASK, 4, 2, &mut out).unwrap();
    assert!(n.irq_level(), "a receive completion and its interrupt enabled");
    assert!(out.contains(&IceAction::Update { at: 50 }));
    n.read(60, BASE + reg::RECV_COMP, 2, &mut out).unwrap();
    assert!(!n.irq_level(), "taking the completion lowers the line");
    // The send line, bit 0.
    n.write(70, BASE + reg::SEND_REQ, 8, send_request(0x8000_0000, 32), &mut out).unwrap();
    n.read_done(90, frame(32, 0), &mut out);
    assert!(!n.irq_level());
    n.write(95, BASE + reg::INTMASK, 4, 1, &mut out).unwrap();
    assert!(n.irq_level());
}

#[test]
fn queues_hold_depth_requests_and_refuse_one_more() {
    for (mut n, d) in [(nic(), D), (nic_config_sized(), 10)] {
        let mut out = Vec::new();
        for i in 0..d {
            n.write(i, BASE + reg::RECV_REQ, 8, 0x8000_0000 + 2048 * i, &mut out).unwrap();
        }
        assert_eq!(counts(&mut n), [d, 0, 0, 0]);
        let e = n.write(d + 1, BASE + reg::RECV_REQ, 8, 0x8010_0000, &mut out).unwrap_err();
        assert!(e.contains("queue full"), "{e}");
        // The reader holds one request; `d` more fill the send queue.
        for i in 0..=d {
            n.write(200 + i, BASE + reg::SEND_REQ, 8, send_request(0x8000_0000, 64), &mut out).unwrap();
        }
        assert!(n.write(300, BASE + reg::SEND_REQ, 8, send_request(0x8000_0000, 64), &mut out).is_err());
        assert_eq!(n.read(0, BASE + reg::MACADDR, 8, &mut out).unwrap(), 0x0203_0405_0607);
    }
}

#[test]
fn a_read_spanning_both_completion_registers_is_refused() {
    let mut n = nic();
    assert!(n.read(0, BASE + reg::SEND_COMP, 8, &mut Vec::new()).is_err());
    assert!(n.read(0, BASE + reg::SEND_COMP, 2, &mut Vec::new()).is_ok());
}

/// The `Transmit` cycle among `out`.
fn sent_at(out: &[IceAction]) -> u64 {
    out.iter().find_map(|a| if let IceAction::Transmit { at, .. } = a { Some(*at) } else { None }).unwrap()
}

#[test]
fn the_harness_rate_limit_spaces_back_to_back_frames_at_half_a_flit_a_cycle() {
    // The artifact's Verilator harness: inc 1, period 1, size 8 (icenet SimNetwork.v).
    let p = IceParams { rate_limit: RateLimit::SIM_NETWORK, ..IceParams::default() };
    let mut n = IceNic::new(p, 0x0203_0405_0607);
    let mut out = Vec::new();
    // A lone frame streams through the limiter as it is read: it leaves as without one.
    n.read_done(10_000, frame(1088, 1), &mut out);
    let first = sent_at(&out);
    assert_eq!(first, 10_004);
    // Its 136 flits reached the limiter one a cycle from 9,869 (the last at 10,004); from
    // a full bucket 16 left at once, the other 120 one every other cycle: done at 10,125.
    // The next, read right behind it, finds the bucket empty: its flits leave one every
    // other cycle from 10,125, so its last leaves the wire 272 cycles later.
    out.clear();
    n.read_done(10_136, frame(1088, 2), &mut out);
    assert!((sent_at(&out) + 136).abs_diff(10_125 + 272) <= 1, "{}", sent_at(&out));
    // Without the limiter the second starts as soon as it is read.
    let mut n = nic();
    n.read_done(10_000, frame(1088, 1), &mut Vec::new());
    out.clear();
    n.read_done(10_136, frame(1088, 2), &mut out);
    assert_eq!(sent_at(&out), 10_140);
}
