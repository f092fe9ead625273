//! Messages and the application header word (docs/platform.md section 2).

/// The first word of every message between a core and the NIC: bits 63..32 IPv4 address,
/// 31..16 context id, 15..0 payload length in bytes (header not counted).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AppHeader {
    pub ip: u32,
    pub context: u16,
    pub len: u16,
}

impl AppHeader {
    pub fn from_word(w: u64) -> AppHeader {
        AppHeader { ip: (w >> 32) as u32, context: (w >> 16) as u16, len: w as u16 }
    }
    pub fn to_word(self) -> u64 {
        ((self.ip as u64) << 32) | ((self.context as u64) << 16) | self.len as u64
    }
}

/// A message inside the NIC or on its way through the network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub src_ip: u32,
    pub src_context: u16,
    pub dst_ip: u32,
    pub dst_context: u16,
    /// Payload length in bytes, 1..=65535.
    pub len: u16,
    /// Multicast group: the contiguous node range `(first, count)` (None for unicast).
    pub group: Option<(u32, u32)>,
    /// Payload as ceil(len/8) native words. Bytes past `len` in the last word are zero:
    /// the wire carries big-endian words and only `len` bytes of them (docs/platform.md section 2), so
    /// the NIC clears the low-order bytes that would not be sent. Shared, not copied, from
    /// the sender's transport through its packets to the receiver's NIC: the words are
    /// the same bytes all the way, and a copy at each end was most of the network's host
    /// cache misses (docs/profile.md, "The network").
    pub words: Words,
}

/// A message's payload words, shared by the message, its packets and the delivered copy.
pub type Words = std::sync::Arc<[u64]>;

/// `n` zero words, in one allocation of exactly their size (`InMsg` fills them packet by
/// packet through `Arc::get_mut`).
pub fn zero_words(n: usize) -> Words {
    std::iter::repeat_n(0, n).collect()
}

/// Number of 8-byte words holding `len` payload bytes.
pub fn words_for(len: u16) -> usize {
    (len as usize).div_ceil(8)
}

/// Clear the bytes of the last word that lie past `len` (they are not on the wire).
pub fn mask_tail(words: &mut [u64], len: u16) {
    let tail = len as usize % 8;
    if let (Some(last), true) = (words.last_mut(), tail != 0) {
        *last &= !0u64 << (64 - 8 * tail);
    }
}

impl Message {
    /// The header word the receiving program reads first.
    pub fn rx_header(&self) -> u64 {
        AppHeader { ip: self.src_ip, context: self.src_context, len: self.len }.to_word()
    }
    /// Words this message occupied in the TX queue: header, group word, payload.
    pub fn tx_words(&self) -> usize {
        1 + self.group.is_some() as usize + words_for(self.len)
    }
    /// Payload bytes as they travel on the wire (big-endian words, `len` bytes).
    pub fn payload_bytes(&self) -> Vec<u8> {
        let mut b: Vec<u8> = self.words.iter().flat_map(|w| w.to_be_bytes()).collect();
        b.truncate(self.len as usize);
        b
    }
    /// Payload words from wire bytes (the inverse of [`Message::payload_bytes`]).
    pub fn words_from_bytes(bytes: &[u8]) -> Vec<u64> {
        bytes
            .chunks(8)
            .map(|c| {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                u64::from_be_bytes(w)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let h = AppHeader { ip: 0x0a00_0002, context: 3, len: 16 };
        assert_eq!(h.to_word(), 0x0a00_0002_0003_0010);
        assert_eq!(AppHeader::from_word(h.to_word()), h);
    }

    #[test]
    fn tail_bytes_are_not_sent() {
        let mut w = vec![0x1122_3344_5566_7788];
        mask_tail(&mut w, 3);
        assert_eq!(w[0], 0x1122_3300_0000_0000);
        let m = Message {
            src_ip: 0,
            src_context: 0,
            dst_ip: 0,
            dst_context: 0,
            len: 3,
            words: w.into(),
            group: None,
        };
        assert_eq!(m.payload_bytes(), vec![0x11, 0x22, 0x33]);
        assert_eq!(Message::words_from_bytes(&m.payload_bytes()), *m.words);
    }
}
