//! Errors: the negated errno of the C calls, and the occupants of a range
//! that was not free.
use crate::maps::MapEntry;
use std::fmt;
use std::io;

/// An error of the library or the kernel.
#[derive(Debug)]
pub enum Error {
    /// The range asked for is taken (`EEXIST`): what occupies it, as
    /// `/proc/self/maps` listed it just after (empty if it was freed in
    /// the meantime).
    Occupied(Vec<MapEntry>),
    /// Any other failure, with its errno (`ENOMEM`, `EINVAL`, ...: each
    /// call's manual page lists them).
    Os(io::Error),
}

/// A `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn from_errno(e: i32) -> Self {
        Error::Os(io::Error::from_raw_os_error(e))
    }

    /// The errno: `EEXIST` for [`Error::Occupied`].
    pub fn errno(&self) -> Option<i32> {
        match self {
            Error::Occupied(_) => Some(EEXIST),
            Error::Os(e) => e.raw_os_error(),
        }
    }
}

pub(crate) const EEXIST: i32 = 17;

/// 0 or more is success; a negative value is a negated errno.
pub(crate) fn check(ret: i32) -> Result<i32> {
    if ret < 0 {
        Err(Error::from_errno(-ret))
    } else {
        Ok(ret)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Occupied(o) if o.is_empty() => {
                write!(f, "the range is occupied")
            }
            Error::Occupied(o) => {
                write!(f, "the range is occupied by")?;
                for (i, m) in o.iter().enumerate() {
                    let path = m.path.to_string_lossy();
                    let sep = if i == 0 { " " } else { ", " };
                    write!(f, "{}{:#x}-{:#x} {}", sep, m.start, m.end, path)?;
                }
                Ok(())
            }
            Error::Os(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Occupied(_) => None,
            Error::Os(e) => Some(e),
        }
    }
}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        match e {
            Error::Occupied(_) => {
                io::Error::new(io::ErrorKind::AlreadyExists, e)
            }
            Error::Os(e) => e,
        }
    }
}
