//! The files a run writes, checked before anything is simulated: each path names a file of
//! its own (two flags naming one file would both be destroyed), given by any way of writing
//! it (`x.csv`, `./x.csv`, `dir/../x.csv`).

use std::path::{Path, PathBuf};

/// No two of the outputs `(flag, path)` name the same file; the error names both flags.
pub fn distinct(outputs: &[(&str, Option<&Path>)]) -> Result<(), String> {
    let given: Vec<(&str, PathBuf)> =
        outputs.iter().filter_map(|(f, p)| p.map(|p| (*f, absolute(p)))).collect();
    for (i, (flag, path)) in given.iter().enumerate() {
        if let Some((other, _)) = given[i + 1..].iter().find(|(_, q)| q == path) {
            return Err(format!(
                "{flag} and {other} name the same file ({}): each output needs its own",
                path.display()
            ));
        }
    }
    Ok(())
}

/// `p` as an absolute path, its directory resolved where it exists (the file may not).
fn absolute(p: &Path) -> PathBuf {
    let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    p.file_name().map_or(dir.clone(), |f| dir.join(f))
}

/// Each output can be created: an unwritable path fails now, not after the run. The file is
/// created empty and written when the run ends.
pub fn creatable(outputs: &[(&str, Option<&Path>)]) -> Result<(), String> {
    for (flag, p) in outputs.iter().filter_map(|(f, p)| p.map(|p| (f, p))) {
        std::fs::File::create(p).map_err(|e| format!("{flag}: {}: {e}", p.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::distinct;
    use std::path::Path;

    #[test]
    fn one_file_named_twice_is_refused_however_written() {
        let (a, b) = (Path::new("x.csv"), Path::new("./x.csv"));
        let e = distinct(&[("--messages", Some(a)), ("--pcap", None), ("--trace", Some(b))]).unwrap_err();
        assert!(e.starts_with("--messages and --trace name the same file"), "{e}");
        assert!(distinct(&[("--messages", Some(a)), ("--trace", Some(Path::new("y.json")))]).is_ok());
    }
}
