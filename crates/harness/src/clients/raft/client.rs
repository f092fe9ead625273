//! The Raft client on the test host: open-loop SETs and GETs, each sent at its time to the
//! replica the client believes leads, redirected by followers, retried after a timeout
//! with the same request id (docs/apps/raft.md "The client"). It sees only what a real
//! client would: replies and redirects (the leaders' announcements feed the timeline and
//! the checks, never the choice of replica).

use super::wire;
use super::wire::Reply;
use nanopu_cluster::node::boot::node_ip;
use nanopu_cluster::TestHost;
use nanopu_nic::Message;
use nanopu_sim::Time;

/// A request's operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Set,
    Get,
}

/// One request of the open-loop stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub id: u64,
    pub op: Op,
    pub key: u64,
    pub value: u64,
    /// Payload words a SET carries beyond its key and value (0, or 8 for the prototype's
    /// 16-byte keys and 64-byte values: docs/apps/raft.md "Keys and values"), each `value`.
    pub extra: u64,
    /// When the open-loop schedule sends it first.
    pub due: Time,
    pub sends: u32,
    pub last_send: Time,
    /// The replica the last send went to.
    pub target: u32,
    pub reply: Option<Reply>,
}

impl Request {
    pub fn latency(&self) -> Option<Time> {
        self.reply.map(|r| r.at.saturating_sub(self.due))
    }

    fn words(&self) -> Vec<u64> {
        match self.op {
            Op::Set => [wire::M_SET, self.id, self.key]
                .into_iter()
                .chain(std::iter::repeat_n(self.value, 1 + self.extra as usize))
                .collect(),
            Op::Get => vec![wire::M_GET, self.id, self.key],
        }
    }
}

/// A leader's announcement: when the host heard it, its term and node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Announcement {
    pub at: Time,
    pub term: u64,
    pub node: u32,
}

/// The client's state, shared by the host's arrival handler and the stepping loop.
pub struct Client {
    pub requests: Vec<Request>,
    pub announcements: Vec<Announcement>,
    pub redirects: u64,
    pub retries: u64,
    /// Replies to a request already answered (a retry's second answer).
    pub duplicate_replies: u64,
    /// Arrivals that were none of the protocol's messages.
    pub strays: u64,
    replicas: u32,
    leader: u32,
    retry: Time,
    backoff: Time,
}

impl Client {
    pub fn new(requests: Vec<Request>, replicas: u32, retry: Time, backoff: Time) -> Client {
        Client {
            requests,
            announcements: Vec::new(),
            redirects: 0,
            retries: 0,
            duplicate_replies: 0,
            strays: 0,
            replicas,
            leader: 0,
            retry,
            backoff,
        }
    }

    /// Send request `i` at `at` to the replica the client believes leads.
    fn send(&mut self, i: usize, at: Time) -> (Time, Message) {
        let r = &mut self.requests[i];
        r.sends += 1;
        r.last_send = at;
        r.target = self.leader;
        (at, TestHost::message(0, node_ip(self.leader), 0, &r.words()))
    }

    /// The first sends of requests due in `[from, to)`.
    pub fn first_sends(&mut self, from: Time, to: Time) -> Vec<(Time, Message)> {
        let start = self.requests.partition_point(|r| r.due < from);
        let end = self.requests.partition_point(|r| r.due < to);
        (start..end).map(|i| self.send(i, self.requests[i].due)).collect()
    }

    /// How long the client waits for an answer to a request sent `sends` times: the retry
    /// timeout, doubled at each send after the first (up to 2^10 times: a client must not
    /// bury a slow leader under its own retries).
    fn timeout(&self, sends: u32) -> Time {
        Time(self.retry.0 << sends.saturating_sub(1).min(10))
    }

    /// Retries at `now` of the requests unanswered for their timeout: to the next replica
    /// if the one that timed out is still the client's guess.
    pub fn retries_due(&mut self, now: Time) -> Vec<(Time, Message)> {
        let late: Vec<usize> = (0..self.requests.len())
            .filter(|&i| {
                let r = &self.requests[i];
                r.sends > 0 && r.reply.is_none() && r.last_send + self.timeout(r.sends) <= now
            })
            .collect();
        let mut out = Vec::with_capacity(late.len());
        for i in late {
            if self.requests[i].target == self.leader {
                self.leader = (self.leader + 1) % self.replicas;
            }
            self.retries += 1;
            out.push(self.send(i, now));
        }
        out
    }

    /// Handle an arrival at `now`; what to send in answer.
    pub fn on_arrival(&mut self, now: Time, m: &Message) -> Vec<(Time, Message)> {
        match wire::parse(m, self.replicas) {
            Some(wire::FromReplica::Reply { req, reply }) => self.on_reply(now, req, reply),
            Some(wire::FromReplica::Redirect { req, hint }) => return self.on_redirect(now, req, hint),
            Some(wire::FromReplica::Leader { term, node }) => {
                self.announcements.push(Announcement { at: now, term, node })
            }
            None => self.strays += 1,
        }
        Vec::new()
    }

    fn index_of(&self, req: u64) -> Option<usize> {
        let i = usize::try_from(req.checked_sub(1)?).ok()?;
        (i < self.requests.len()).then_some(i)
    }

    fn on_reply(&mut self, now: Time, req: u64, mut reply: Reply) {
        let Some(i) = self.index_of(req) else { return self.strays += 1 };
        reply.at = now;
        self.leader = reply.from;
        match self.requests[i].reply {
            Some(_) => self.duplicate_replies += 1,
            None => self.requests[i].reply = Some(reply),
        }
    }

    /// A follower's redirect: at once to the leader it names, or (it knows none: an
    /// election is on) to the next replica after the backoff.
    fn on_redirect(&mut self, now: Time, req: u64, hint: Option<u32>) -> Vec<(Time, Message)> {
        self.redirects += 1;
        let Some(i) = self.index_of(req) else { return Vec::new() };
        if self.requests[i].reply.is_some() {
            return Vec::new();
        }
        let at = match hint {
            Some(h) => {
                self.leader = h;
                now
            }
            None => {
                if self.requests[i].target == self.leader {
                    self.leader = (self.leader + 1) % self.replicas;
                }
                now + self.backoff
            }
        };
        vec![self.send(i, at)]
    }

    /// Every request answered?
    pub fn done(&self) -> bool {
        self.requests.iter().all(|r| r.reply.is_some())
    }
}
