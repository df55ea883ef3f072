// SPDX-License-Identifier: GPL-2.0-only

//! Splitting a write to `kprobe_events` into commands.
//!
//! [`run_commands`] is `trace_parse_run_command()` (trace.c): the
//! user buffer is taken in chunks of [`WRITE_BUFSIZE`], split at newlines,
//! everything from a `#` on is a comment, and each line (empty ones too)
//! goes to the command handler; the first failure stops the write and the
//! lines before it stay applied. A line that does not fit in a chunk fails
//! with the caller's "too long" error, as does (C quirk) a line cut short by
//! a NUL byte, since C measures lines with `strlen()`.

/// Chunk size (`WRITE_BUFSIZE`): a line may have at most 4094 bytes.
pub const WRITE_BUFSIZE: usize = 4096;

/// Runs the commands of a `count`-byte write. `read(offset, dst)` copies
/// user bytes (`copy_from_user()`); `run(line)` handles one command
/// (without its newline and comment). Returns `count` when every line ran.
///
/// # Errors
///
/// The first error of `read` or `run`, or `too_long` for a line longer than
/// a chunk allows.
pub fn run_commands<E>(
    count: usize,
    chunk: &mut [u8; WRITE_BUFSIZE],
    mut read: impl FnMut(usize, &mut [u8]) -> Result<(), E>,
    mut run: impl FnMut(&[u8]) -> Result<(), E>,
    too_long: impl Fn() -> E,
) -> Result<usize, E> {
    let mut done = 0;
    while done < count {
        let size = (count - done).min(WRITE_BUFSIZE - 1);
        read(done, &mut chunk[..size])?;
        chunk[size] = 0;
        // C works on the NUL-terminated string.
        let text = &chunk[..chunk.iter().position(|&c| c == 0).unwrap_or(size)];
        let mut pos = 0;
        loop {
            let rest = &text[pos..];
            let (line, used) = match rest.iter().position(|&c| c == b'\n') {
                Some(nl) => (&rest[..nl], nl + 1),
                None => {
                    if done + rest.len() < count {
                        if pos != 0 {
                            // Take the rest again at the start of a chunk.
                            break;
                        }
                        return Err(too_long());
                    }
                    (rest, rest.len())
                }
            };
            done += used;
            let line = match line.iter().position(|&c| c == b'#') {
                Some(h) => &line[..h],
                None => line,
            };
            run(line)?;
            pos += used;
            if done >= count {
                break;
            }
            if pos >= text.len() {
                // The chunk ended exactly at a newline, or at a NUL byte C
                // would stop at: C then loops on an empty string.
                if pos < size {
                    return Err(too_long());
                }
                break;
            }
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::String;
    use std::vec::Vec;

    fn write(input: &[u8], fail_on: &str) -> (Result<usize, &'static str>, Vec<String>) {
        let mut seen = Vec::new();
        let mut chunk = [0u8; WRITE_BUFSIZE];
        let r = run_commands(
            input.len(),
            &mut chunk,
            |off, dst| {
                dst.copy_from_slice(&input[off..off + dst.len()]);
                Ok(())
            },
            |line| {
                let l = String::from_utf8_lossy(line).into_owned();
                let bad = !fail_on.is_empty() && l.contains(fail_on);
                seen.push(l);
                if bad {
                    Err("bad")
                } else {
                    Ok(())
                }
            },
            || "too long",
        );
        (r, seen)
    }

    #[test]
    fn lines_comments_and_failures() {
        let input = b"p a\n\n# c\np b # x\np c";
        let (r, seen) = write(input, "");
        assert_eq!(r, Ok(input.len()));
        assert_eq!(seen, ["p a", "", "", "p b ", "p c"]);
        // Stops at the first failing line; the ones before ran.
        let (r, seen) = write(b"p a\np bad\np c\n", "bad");
        assert_eq!(r, Err("bad"));
        assert_eq!(seen, ["p a", "p bad"]);
    }

    #[test]
    fn long_lines_and_chunks() {
        // Lines across chunk boundaries are taken again whole.
        let mut input = Vec::new();
        let mut want = Vec::new();
        for i in 0..300 {
            let l = std::format!("p:e{i} vfs_read a=%ax b=%bx");
            input.extend_from_slice(l.as_bytes());
            input.push(b'\n');
            want.push(l);
        }
        let (r, seen) = write(&input, "");
        assert_eq!(r, Ok(input.len()));
        assert_eq!(seen, want);
        // 4094 bytes and a newline fit; 4095 do not.
        let mut ok = std::vec![b'x'; 4094];
        ok.push(b'\n');
        ok.extend_from_slice(b"p y\n");
        assert_eq!(write(&ok, "").0, Ok(ok.len()));
        let mut long = std::vec![b'x'; 4095];
        long.push(b'\n');
        assert_eq!(write(&long, "").0, Err("too long"));
        // A NUL in the middle of the buffer (C's strlen() stops there).
        assert_eq!(write(b"p a\0b\np c\n", "").0, Err("too long"));
        assert_eq!(write(b"p a\n\0b\n", "").0, Err("too long"));
    }
}
