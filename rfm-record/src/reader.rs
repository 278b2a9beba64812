//! Reading a recording: the header, then one checked record at a time. A file cut
//! short (its writer killed) reads up to its last complete record; anything else
//! that does not check out is an error naming the record and the byte.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use super::{
    Header, Kind, Record, RecordedStruct, MAGIC, MAX_HEADER, MAX_STRUCTS, NO_NODE, RECORD_HEAD,
    VERSION,
};
use rfm_interface::descriptor;

/// Why a recording cannot be read (further).
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("cannot open the recording `{file}`: {cause}")]
    Open { file: String, cause: io::Error },
    #[error("reading the recording `{file}` failed: {cause}")]
    Read { file: String, cause: io::Error },
    #[error("`{file}` is not a recording: it does not start with the recording magic \"RFMrec\"")]
    NotARecording { file: String },
    #[error(
        "`{file}` is a recording of format version {found}; this build reads version {VERSION}: \
         read it with a newer build"
    )]
    NewerVersion { file: String, found: u32 },
    #[error(
        "`{file}` ends inside its header ({have} of {need} bytes): it was cut short before its \
         first record"
    )]
    TruncatedHeader { file: String, have: u64, need: u64 },
    #[error("`{file}`: the header is corrupt: {what}")]
    CorruptHeader { file: String, what: String },
    #[error(
        "`{file}`: record {index} (byte {offset}) is corrupt: {what}; the {index} records before \
         it are good"
    )]
    CorruptRecord {
        file: String,
        index: u64,
        offset: u64,
        what: String,
    },
}

/// A recording being read.
#[derive(Debug)]
pub struct Reader<R> {
    file: String,
    source: R,
    header: Header,
    /// Records read so far.
    index: u64,
    /// Byte offset of the next record.
    offset: u64,
    /// Bytes after the last complete record, once the end is reached.
    cut: u64,
    /// The longest record body the header allows ([`Header::largest_body`]).
    largest_body: usize,
}

impl Reader<BufReader<File>> {
    /// Opens the recording at `path` and reads its header.
    pub fn open(path: &Path) -> Result<Reader<BufReader<File>>, RecordError> {
        let file = path.display().to_string();
        let f = File::open(path).map_err(|cause| RecordError::Open {
            file: file.clone(),
            cause,
        })?;
        Reader::new(&file, BufReader::new(f))
    }
}

impl<R: Read> Reader<R> {
    /// Reads the header from `source`; `file` names it in errors.
    pub fn new(file: &str, mut source: R) -> Result<Reader<R>, RecordError> {
        let file = file.to_owned();
        let read_error = |cause| RecordError::Read {
            file: file.clone(),
            cause,
        };
        let mut fixed = [0u8; 16];
        let have = read_full(&mut source, &mut fixed).map_err(read_error)?;
        if have < MAGIC.len() || fixed[..MAGIC.len()] != MAGIC {
            return Err(RecordError::NotARecording { file });
        }
        let truncated = |have: usize, need: usize| RecordError::TruncatedHeader {
            file: file.clone(),
            have: have as u64,
            need: need as u64,
        };
        if have < fixed.len() {
            return Err(truncated(have, fixed.len()));
        }
        let version = u32::from_le_bytes(fixed[8..12].try_into().expect("4 bytes"));
        let len = u32::from_le_bytes(fixed[12..16].try_into().expect("4 bytes"));
        let corrupt = |what: String| RecordError::CorruptHeader {
            file: file.clone(),
            what,
        };
        if version > VERSION {
            return Err(RecordError::NewerVersion {
                file,
                found: version,
            });
        }
        if version == 0 {
            return Err(corrupt("format version 0".into()));
        }
        if len > MAX_HEADER {
            return Err(corrupt(format!("a header length of {len} bytes")));
        }
        let mut rest = vec![0u8; len as usize + 4];
        let got = read_full(&mut source, &mut rest).map_err(read_error)?;
        if got < rest.len() {
            return Err(truncated(16 + got, 16 + rest.len()));
        }
        let (body, crc) = rest.split_at(len as usize);
        let mut covered = fixed[8..].to_vec();
        covered.extend_from_slice(body);
        let stored = u32::from_le_bytes(crc.try_into().expect("4 bytes"));
        if crc32c::crc32c(&covered) != stored {
            return Err(corrupt("its CRC does not match".into()));
        }
        let header = parse_header(body, version).map_err(corrupt)?;
        Ok(Reader {
            file,
            source,
            largest_body: header.largest_body(),
            header,
            index: 0,
            offset: 16 + rest.len() as u64,
            cut: 0,
        })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Records read so far.
    pub fn records_read(&self) -> u64 {
        self.index
    }

    /// After the last record: bytes of an incomplete record at the end (0 for a
    /// file its writer closed).
    pub fn cut(&self) -> u64 {
        self.cut
    }

    /// The next record; `None` at the end of the file (see [`Reader::cut`]).
    pub fn next_record(&mut self) -> Result<Option<Record>, RecordError> {
        let mut len = [0u8; 4];
        let have = read_full(&mut self.source, &mut len).map_err(|cause| RecordError::Read {
            file: self.file.clone(),
            cause,
        })?;
        if have < len.len() {
            self.cut = have as u64;
            return Ok(None);
        }
        let len = u32::from_le_bytes(len);
        if !(RECORD_HEAD..=self.largest_body).contains(&(len as usize)) {
            return Err(self.corrupt(format!(
                "a record length of {len} bytes (its nodes' records are {RECORD_HEAD} to {})",
                self.largest_body
            )));
        }
        let mut body = vec![0u8; len as usize + 4];
        let got = read_full(&mut self.source, &mut body).map_err(|cause| RecordError::Read {
            file: self.file.clone(),
            cause,
        })?;
        if got < body.len() {
            self.cut = 4 + got as u64;
            return Ok(None);
        }
        let crc = u32::from_le_bytes(body[len as usize..].try_into().expect("4 bytes"));
        body.truncate(len as usize);
        if crc32c::crc32c(&body) != crc {
            return Err(self.corrupt("its CRC does not match".into()));
        }
        let kind = self.checked_kind(&body)?;
        let record = Record {
            kind,
            slot: body[1],
            recorded_ns: u64::from_le_bytes(body[4..12].try_into().expect("8 bytes")),
            body: body[RECORD_HEAD..].to_vec(),
        };
        self.index += 1;
        self.offset += 8 + u64::from(len);
        Ok(Some(record))
    }

    /// The kind of the record of `body` (its CRC checked), once its bytes
    /// are as that kind's records are.
    fn checked_kind(&self, body: &[u8]) -> Result<Kind, RecordError> {
        let Some(kind) = Kind::of(body[0]) else {
            return Err(self.corrupt(format!("unknown record kind {}", body[0])));
        };
        if body[2..4] != [0, 0] {
            return Err(self.corrupt("reserved bytes are not zero".into()));
        }
        if kind == Kind::Missed && body.len() != RECORD_HEAD + 8 {
            return Err(self.corrupt(format!(
                "a count of missed frames of {} bytes, not 8",
                body.len() - RECORD_HEAD
            )));
        }
        if kind == Kind::Struct {
            let slot = usize::from(body[1]);
            let Some(s) = self.header.structs.get(slot) else {
                return Err(self.corrupt(format!(
                    "a record of struct {slot}, and the header describes {}",
                    self.header.structs.len()
                )));
            };
            if body.len() - RECORD_HEAD != s.layout.size {
                return Err(self.corrupt(format!(
                    "a record of struct `{}` of {} bytes, not its {}",
                    s.name,
                    body.len() - RECORD_HEAD,
                    s.layout.size
                )));
            }
        }
        Ok(kind)
    }

    fn corrupt(&self, what: String) -> RecordError {
        RecordError::CorruptRecord {
            file: self.file.clone(),
            index: self.index,
            offset: self.offset,
            what,
        }
    }
}

/// Reads until `buf` is full or the source ends; how many bytes it got.
fn read_full(source: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut have = 0;
    while have < buf.len() {
        match source.read(&mut buf[have..]) {
            Ok(0) => break,
            Ok(n) => have += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(have)
}

/// The header's fields of format `version`; the error says which one does not
/// parse.
fn parse_header(b: &[u8], version: u32) -> Result<Header, String> {
    let mut f = Fields { b, at: 0 };
    let fingerprint = f.u64("the fingerprint")?;
    let (node, count) = if version == 1 {
        let node = f.take(1, "the node")?[0];
        let count = f.take(1, "the node count")?[0];
        f.take(2, "the reserved bytes")?;
        ((node != u8::MAX).then_some(node), u16::from(count))
    } else {
        let node = match f.u16("the node")? {
            NO_NODE => None,
            slot => Some(u8::try_from(slot).map_err(|_| format!("a node slot of {slot}"))?),
        };
        (node, f.u16("the node count")?)
    };
    let started_ns = f.u64("the start time")?;
    let interface = f.text("the interface name")?;
    let parameters = f.text("the parameters")?;
    let mut descriptors = Vec::new();
    for i in 0..count {
        let what = format!("descriptor {i}");
        let bytes = f.sized(&what)?.to_vec();
        descriptor::decode(&bytes).map_err(|e| format!("{what}: {e}"))?;
        descriptors.push(bytes);
    }
    let mut structs = Vec::new();
    if version >= 3 {
        let count = f.u16("the struct count")?;
        if usize::from(count) > MAX_STRUCTS {
            return Err(format!("{count} structs (at most {MAX_STRUCTS})"));
        }
        for i in 0..count {
            let what = format!("struct {i}");
            let s = RecordedStruct::decode(f.sized(&what)?).map_err(|e| format!("{what}: {e}"))?;
            structs.push(s);
        }
    }
    if f.at != b.len() {
        return Err(format!(
            "{} bytes follow the last descriptor",
            b.len() - f.at
        ));
    }
    Ok(Header {
        fingerprint,
        node,
        started_ns,
        interface,
        parameters,
        descriptors,
        structs,
    })
}

/// The header's bytes, read field by field; an error names the field that
/// runs past the end.
struct Fields<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let end = (self.at)
            .checked_add(n)
            .filter(|&end| end <= self.b.len())
            .ok_or_else(|| format!("{what} runs past its end"))?;
        let field = &self.b[self.at..end];
        self.at = end;
        Ok(field)
    }

    fn u16(&mut self, what: &str) -> Result<u16, String> {
        Ok(u16::from_le_bytes(
            self.take(2, what)?.try_into().expect("2 bytes"),
        ))
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8, what)?.try_into().expect("8 bytes"),
        ))
    }

    /// Bytes after their u32 length.
    fn sized(&mut self, what: &str) -> Result<&'a [u8], String> {
        let len = u32::from_le_bytes(self.take(4, what)?.try_into().expect("4 bytes"));
        self.take(len as usize, what)
    }

    fn text(&mut self, what: &str) -> Result<String, String> {
        String::from_utf8(self.sized(what)?.to_vec()).map_err(|_| format!("{what} is not UTF-8"))
    }
}
