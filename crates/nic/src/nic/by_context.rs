//! A map by context id for the few contexts a node registers: the ids in ascending order
//! in one vector, looked through in order. A node's NIC looks a context up at every
//! message that arrives and every message a core finishes; with one or two contexts that
//! takes a few instructions where a `BTreeMap` look-up took about sixty (callgrind, a
//! 1,024-core NanoSort).

/// Values by context id, iterated in ascending id order (as a `BTreeMap` would be).
#[derive(Clone, Debug)]
pub struct ByContext<V> {
    entries: Vec<(u16, V)>,
}

impl<V> Default for ByContext<V> {
    fn default() -> Self {
        ByContext { entries: Vec::new() }
    }
}

impl<V> ByContext<V> {
    #[inline]
    pub fn get(&self, id: u16) -> Option<&V> {
        let i = self.find(id).ok()?;
        Some(&self.entries[i].1)
    }

    #[inline]
    pub fn get_mut(&mut self, id: u16) -> Option<&mut V> {
        let i = self.find(id).ok()?;
        Some(&mut self.entries[i].1)
    }

    /// The value of `id`, made with `V::default()` if it had none.
    pub fn or_default(&mut self, id: u16) -> &mut V
    where
        V: Default,
    {
        let i = self.find(id).unwrap_or_else(|i| {
            self.entries.insert(i, (id, V::default()));
            i
        });
        &mut self.entries[i].1
    }

    pub fn iter(&self) -> impl Iterator<Item = (u16, &V)> {
        self.entries.iter().map(|(id, v)| (*id, v))
    }

    /// Where `id` is, or where it would go.
    #[inline]
    fn find(&self, id: u16) -> Result<usize, usize> {
        let i = self.entries.iter().position(|(k, _)| *k >= id).unwrap_or(self.entries.len());
        match self.entries.get(i) {
            Some((k, _)) if *k == id => Ok(i),
            _ => Err(i),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_id_and_iterates_in_id_order() {
        let mut m = ByContext::<Vec<u8>>::default();
        for id in [7u16, 2, 9, 2, 0] {
            m.or_default(id).push(id as u8);
        }
        assert_eq!(m.get(2), Some(&vec![2, 2]));
        assert_eq!(m.get(3), None);
        m.get_mut(9).expect("present").clear();
        let ids: Vec<u16> = m.iter().map(|(id, _)| id).collect();
        assert_eq!(ids, [0, 2, 7, 9]);
        assert_eq!(m.get(9), Some(&vec![]));
    }
}
