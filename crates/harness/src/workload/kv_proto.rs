//! The nanoPU prototype's MICA request format (`[load.kv] format = "prototype"`): what the
//! prototype's load generator (the FireSim switch's, load type MICA) sends and what the
//! prototype's MICA server answers, so that its own server runs under `nanopu load`.
//! Format, keys and values: docs/apps/mica.md "The prototype's request format".
//!
//! A request is {service time, send time, op, key[0], key[1], key hash} and for a SET the
//! 64 value words {key, key + 1, key + 2, 0, ...}; a GET's reply is {service time, send
//! time, the 64 value words}, a SET's {service time, send time, 1}. The server preloads
//! every key with the value a SET writes, so a correct GET always returns that value.

/// GET or SET: the prototype's `MICA_R_TYPE` and `MICA_W_TYPE`, which `sw/apps/mica.c`
/// uses too.
pub const OP_GET: u64 = 1;
pub const OP_SET: u64 = 2;
/// The service time every request carries, cycles: the prototype's MICA runtime config asks
/// for a fixed service time of 1,600 cycles (`service_dist_type=FIXED`,
/// `fixed_dist_cycles=1600`). Its MICA server only echoes it (0 would end the server).
pub const SERVICE_TIME: u64 = 1600;
/// Value words of every request and GET reply (the prototype's `MICA_VALUE_SIZE_WORDS`).
pub const VALUE_WORDS: usize = 64;
/// A SET reply's third word.
const SET_DONE: u64 = 1;

/// CityHash64 of a 16-byte string, the path Pike and Alakuijala's CityHash v1.1 takes for
/// inputs of 8 to 16 bytes, on the key's two words in little-endian byte order (as the
/// prototype's load generator hashes them on an x86 host). Written from the algorithm's
/// published description; `tests` holds it to values of Google's own implementation.
pub fn cityhash16(key: [u64; 2]) -> u64 {
    const K2: u64 = 0x9ae1_6a3b_2f90_404f;
    let mul = K2.wrapping_add(16 * 2);
    let a = key[0].wrapping_add(K2);
    let b = key[1];
    let c = b.rotate_right(37).wrapping_mul(mul).wrapping_add(a);
    let d = a.rotate_right(25).wrapping_add(b).wrapping_mul(mul);
    hash_len16(c, d, mul)
}

/// CityHash's Murmur-inspired mix of two words.
fn hash_len16(u: u64, v: u64, mul: u64) -> u64 {
    let mut a = (u ^ v).wrapping_mul(mul);
    a ^= a >> 47;
    let mut b = (v ^ a).wrapping_mul(mul);
    b ^= b >> 47;
    b.wrapping_mul(mul)
}

/// Key number `k`'s value words (preloaded, and what every SET of it writes).
pub fn value(key: u64) -> Vec<u64> {
    let mut v = vec![0; VALUE_WORDS];
    v[..3].copy_from_slice(&[key, key + 1, key + 2]);
    v
}

/// The words of a SET (`set`) or GET of key number `k`; `tag` is its send time, echoed by
/// the server.
pub fn request_words(set: bool, k: u64, tag: u64) -> Vec<u64> {
    let key = [k, 0];
    let kind = if set { OP_SET } else { OP_GET };
    let mut w = vec![SERVICE_TIME, tag, kind, key[0], key[1], cityhash16(key)];
    if set {
        w.extend(value(key[0]));
    }
    w
}

/// Judge a reply's words to a SET (`set`) or GET of key number `k` (the words after the
/// two echoed ones must be the value, or the SET's acknowledgement); `Ok(0)`, the only
/// version there is.
pub fn judge(set: bool, k: u64, words: &[u64]) -> Result<u32, String> {
    if words[0] != SERVICE_TIME {
        return Err(format!("reply word 0 {:#x}: not the service time {SERVICE_TIME} it was sent", words[0]));
    }
    let body = &words[2..];
    match set {
        true if body == [SET_DONE] => Ok(0),
        true => Err(format!("SET of key {k}: reply {body:x?}, not [1]")),
        false if body == value(k).as_slice() => Ok(0),
        false => Err(format!("GET of key {k}: {} bytes, not its value", 8 * body.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CityHash64 of the 16 bytes (k as a little-endian word, then 8 zero bytes), from
    /// Google's CityHash v1.1 as the `cityhash` Python package (0.4.10) wraps it:
    /// `cityhash.CityHash64(struct.pack('<QQ', k, 0))`, computed by hand outside this
    /// repository; and a key with both words set, the same way.
    #[test]
    fn cityhash16_gives_googles_values() {
        assert_eq!(cityhash16([1, 0]), 0x89b7_9444_ffef_f003);
        assert_eq!(cityhash16([2, 0]), 0x32a2_14ff_055f_c22c);
        assert_eq!(cityhash16([10000, 0]), 0x801e_7961_5797_b15b);
        assert_eq!(cityhash16([0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210]), 0xa774_ef50_4c42_6871);
    }

    #[test]
    fn a_set_carries_the_value_and_a_get_none() {
        let set = request_words(true, 7, 99);
        assert_eq!(&set[..6], &[SERVICE_TIME, 99, OP_SET, 7, 0, cityhash16([7, 0])]);
        assert_eq!(&set[6..9], &[7, 8, 9]);
        assert_eq!(set.len(), 6 + VALUE_WORDS);
        assert!(set[9..].iter().all(|&w| w == 0));
        assert_eq!(request_words(false, 7, 99).len(), 6);
    }

    #[test]
    fn judge_wants_the_value_or_the_acknowledgement() {
        let mut reply = [vec![SERVICE_TIME, 99], value(5)].concat();
        assert_eq!(judge(false, 5, &reply), Ok(0));
        assert!(judge(false, 6, &reply).is_err(), "another key's value");
        reply[40] = 1;
        assert!(judge(false, 5, &reply).is_err(), "a changed word");
        assert_eq!(judge(true, 5, &[SERVICE_TIME, 99, 1]), Ok(0));
        assert!(judge(true, 5, &[SERVICE_TIME, 99, 0]).is_err());
        assert!(judge(true, 5, &[0, 99, 1]).unwrap_err().contains("service time"));
    }
}
