//! Every system call that needs `unsafe`, behind the same safe functions as `unix.rs`, over
//! Win32 (the `windows-sys` bindings). What each part keeps of the Unix meaning:
//!
//! - **The clock**: `QueryPerformanceCounter`, one counter for every process of the host
//!   since boot, as `CLOCK_MONOTONIC` is. Windows names no boot here: a record that no
//!   process uses and whose clock reads behind the wall clock is anchored anew (see
//!   `coord::arbiter`).
//! - **Files** ([`open_in`]): `CreateFileW` on the directory's path and the name (no
//!   separators, no stream names), never following a reparse point (a symbolic link or a
//!   junction is refused), refusing devices (`NUL`, `CON`, ...) and directories, files with
//!   other names (hard links) and, for this user's own files, another owner. A host record is
//!   opened without `FILE_SHARE_DELETE`, so while any process has it open, no one can
//!   remove, rename or replace it; and a file cannot be truncated below a mapped view. So the
//!   two hazards that Linux's beacons and `SIGBUS` guard cover cannot happen here, and
//!   there is nothing to look for ([`locks::Beacons::Unneeded`]). A state file is opened
//!   with `FILE_SHARE_DELETE`, as it is replaced by a rename (`MoveFileExW`, written through).
//! - **The user**: the token's user SID, as a 32-bit id made from its text, in record names;
//!   the files a process creates are made its user's (an elevated administrator's would be
//!   the Administrators group's by default). Access is the directory's ACL: the default,
//!   `%ProgramData%\libsnowflake`, lets every user create files and read others', and write
//!   only their own (as a sticky `/tmp` does). A file made private (mode 0600 on Unix: state
//!   files, a host lease's token) gets an ACL that grants its owner alone. The checks of
//!   directory owners and modes that Unix makes are left to those ACLs.
//! - **Locks**: `LockFileEx` byte ranges, held per open file (a handle and its duplicates)
//!   and let go when it is closed or the process ends, shared or exclusive: the users' lock
//!   and the set-up lock keep their Unix meaning. There is no list of locks, so the
//!   processes' marks are found by trying ranges of them ([`locks::marked`]); a try holds a
//!   range for an instant, so a mark or a join that meets one tries again.
//! - **No `fork()`**: the fork generation stays 0, the fork gate and its hooks are empty.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::marker::PhantomData;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::{FileId, Meta, Refusal, View};

use windows_sys::Win32::Foundation::{
    CloseHandle, GetLastError, LocalFree, ERROR_ACCESS_DENIED, ERROR_FILE_NOT_FOUND, ERROR_IO_PENDING,
    ERROR_LOCK_VIOLATION, ERROR_PATH_NOT_FOUND, ERROR_SHARING_VIOLATION, GENERIC_READ, GENERIC_WRITE, HANDLE,
    INVALID_HANDLE_VALUE, STILL_ACTIVE,
};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, GetSecurityInfo,
    SDDL_REVISION_1, SE_FILE_OBJECT,
};
use windows_sys::Win32::Security::Cryptography::{BCryptGenRandom, BCRYPT_USE_SYSTEM_PREFERRED_RNG};
use windows_sys::Win32::Security::{
    GetTokenInformation, LookupAccountSidW, TokenUser, OWNER_SECURITY_INFORMATION, PSID, SECURITY_ATTRIBUTES,
    TOKEN_QUERY, TOKEN_USER,
};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, DeleteFileW, FileDispositionInfo, GetFileAttributesW, GetFileInformationByHandle,
    GetFileType, LockFileEx, MoveFileExW, SetFileInformationByHandle, UnlockFileEx,
    BY_HANDLE_FILE_INFORMATION, CREATE_NEW, DELETE, FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_NORMAL,
    FILE_ATTRIBUTE_REPARSE_POINT, FILE_DISPOSITION_INFO, FILE_FLAG_BACKUP_SEMANTICS,
    FILE_FLAG_OPEN_REPARSE_POINT, FILE_READ_ATTRIBUTES, FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE,
    FILE_TYPE_DISK, INVALID_FILE_ATTRIBUTES, LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY,
    MOVEFILE_REPLACE_EXISTING, MOVEFILE_WRITE_THROUGH, OPEN_ALWAYS, OPEN_EXISTING,
};
use windows_sys::Win32::System::Memory::{
    CreateFileMappingW, MapViewOfFile, UnmapViewOfFile, FILE_MAP_READ, FILE_MAP_WRITE,
    MEMORY_MAPPED_VIEW_ADDRESS, PAGE_READWRITE,
};
use windows_sys::Win32::System::Performance::{QueryPerformanceCounter, QueryPerformanceFrequency};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetExitCodeProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};
use windows_sys::Win32::System::IO::OVERLAPPED;

/// `QueryPerformanceCounter` in nanoseconds: one clock for every process of the host since
/// boot, never going back.
#[inline]
pub(crate) fn monotonic_ns() -> u64 {
    static FREQUENCY: OnceLock<u64> = OnceLock::new();
    let frequency = *FREQUENCY.get_or_init(|| {
        let mut f = 0i64;
        // SAFETY: a valid out-pointer; cannot fail since Windows XP.
        unsafe { QueryPerformanceFrequency(&mut f) };
        (f as u64).max(1)
    });
    let mut count = 0i64;
    // SAFETY: a valid out-pointer; cannot fail since Windows XP.
    unsafe { QueryPerformanceCounter(&mut count) };
    (u128::from(count as u64) * 1_000_000_000 / u128::from(frequency)) as u64
}

/// A wide, NUL-terminated copy of `s`.
fn wide(s: &OsStr) -> Vec<u16> {
    s.encode_wide().chain(std::iter::once(0)).collect()
}

fn last_error() -> u32 {
    // SAFETY: no arguments.
    unsafe { GetLastError() }
}

fn os_error(code: u32) -> io::Error {
    io::Error::from_raw_os_error(code as i32)
}

/// A 32-bit id of a SID, from its text (`S-1-5-21-...`): the "uid" of record names.
fn id_of_sid_text(text: &str) -> u32 {
    let mut h = crate::hash::Fnv1a::new();
    let _ = std::fmt::Write::write_str(&mut h, text);
    (h.0 ^ (h.0 >> 32)) as u32
}

/// The text of `sid`.
fn sid_text(sid: PSID) -> Option<String> {
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: a valid SID and an out-pointer that receives a LocalAlloc'd string.
    if unsafe { ConvertSidToStringSidW(sid, &mut text) } == 0 || text.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated string that ConvertSidToStringSidW allocated.
    let len = (0..).take_while(|&i| unsafe { *text.add(i) } != 0).count();
    // SAFETY: `len` u16s of it.
    let s = String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(text, len) });
    // SAFETY: allocated with LocalAlloc by ConvertSidToStringSidW.
    unsafe { LocalFree(text.cast()) };
    Some(s)
}

/// This process's token's user: the SID text and the name of its account.
struct Account {
    sid: String,
    name: Option<String>,
}

fn token_user() -> &'static Option<Account> {
    static USER: OnceLock<Option<Account>> = OnceLock::new();
    USER.get_or_init(|| {
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: the pseudo-handle of this process and an out-pointer.
        if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
            return None;
        }
        let mut len = 0u32;
        // SAFETY: asks for the size only.
        unsafe { GetTokenInformation(token, TokenUser, std::ptr::null_mut(), 0, &mut len) };
        let mut buf = vec![0u64; (len as usize).div_ceil(8).max(1)];
        // SAFETY: a buffer of at least `len` bytes, 8-aligned.
        let ok =
            unsafe { GetTokenInformation(token, TokenUser, buf.as_mut_ptr().cast(), len, &mut len) } != 0;
        // SAFETY: the token opened above.
        unsafe { CloseHandle(token) };
        if !ok {
            return None;
        }
        // SAFETY: GetTokenInformation(TokenUser) wrote a TOKEN_USER at the buffer's start.
        let sid = unsafe { (*buf.as_ptr().cast::<TOKEN_USER>()).User.Sid };
        let text = sid_text(sid)?;
        let (mut name, mut domain) = ([0u16; 256], [0u16; 256]);
        let (mut name_len, mut domain_len, mut kind) = (256u32, 256u32, 0);
        // SAFETY: a valid SID and buffers of the lengths given.
        let named = unsafe {
            LookupAccountSidW(
                std::ptr::null(),
                sid,
                name.as_mut_ptr(),
                &mut name_len,
                domain.as_mut_ptr(),
                &mut domain_len,
                &mut kind,
            )
        } != 0;
        let name = named.then(|| {
            let n = String::from_utf16_lossy(&name[..name_len as usize]);
            let d = String::from_utf16_lossy(&domain[..domain_len as usize]);
            if d.is_empty() {
                n
            } else {
                format!("{d}\\{n}")
            }
        });
        Some(Account { sid: text, name })
    })
}

/// The variable `name`, as `std::env::var_os` gives it (Windows matches names without regard
/// to case; Unix's `env_var` reads `environ` in place).
pub(crate) fn env_var(name: &str) -> Option<std::ffi::OsString> {
    std::env::var_os(name)
}

/// No fingerprint here (reading the environment block allocates): [`crate::env`] scans the
/// names for near misses every time.
pub(crate) fn env_fingerprint() -> Option<u64> {
    None
}

/// This user's id: a 32-bit id of the token's user SID (see the module docs).
pub(crate) fn euid() -> u32 {
    token_user().as_ref().map_or(0, |o| id_of_sid_text(&o.sid))
}

// ---------------------------------------------------------------------------------------------
// Opening files.

/// A directory the library keeps files in, open (it cannot be removed while it is).
pub(crate) struct Dir {
    _handle: File,
    path: PathBuf,
    /// Its volume's serial number and its file index (see [`FileId`]).
    id: FileId,
}

/// Opens `path` with `CreateFileW`, as a `File`.
fn create(
    path: &Path,
    access: u32,
    share: u32,
    disposition: u32,
    flags: u32,
    security: Option<&SECURITY_ATTRIBUTES>,
) -> io::Result<File> {
    let name = wide(path.as_os_str());
    // SAFETY: a NUL-terminated wide path; the security attributes, if any, outlive the call.
    let h = unsafe {
        CreateFileW(
            name.as_ptr(),
            access,
            share,
            security.map_or(std::ptr::null(), |s| s as *const _),
            disposition,
            flags,
            std::ptr::null_mut(),
        )
    };
    if h == INVALID_HANDLE_VALUE {
        return Err(os_error(last_error()));
    }
    // SAFETY: a handle just opened, owned by nobody else.
    Ok(unsafe { File::from_raw_handle(h as _) })
}

fn info(file: &File) -> io::Result<BY_HANDLE_FILE_INFORMATION> {
    // SAFETY: a zeroed value is a valid out-value.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: a valid handle and out-pointer.
    if unsafe { GetFileInformationByHandle(file.as_raw_handle() as HANDLE, &mut info) } == 0 {
        return Err(os_error(last_error()));
    }
    Ok(info)
}

fn id_of(info: &BY_HANDLE_FILE_INFORMATION) -> FileId {
    FileId(
        u64::from(info.dwVolumeSerialNumber),
        u64::from(info.nFileIndexHigh) << 32 | u64::from(info.nFileIndexLow),
    )
}

/// The id (see [`euid`]) of `file`'s owner.
fn owner_of(file: &File) -> io::Result<u32> {
    let mut owner: PSID = std::ptr::null_mut();
    let mut sd: *mut std::ffi::c_void = std::ptr::null_mut();
    // SAFETY: a valid handle and out-pointers; the descriptor is LocalAlloc'd.
    let r = unsafe {
        GetSecurityInfo(
            file.as_raw_handle() as HANDLE,
            SE_FILE_OBJECT,
            OWNER_SECURITY_INFORMATION,
            &mut owner,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut sd,
        )
    };
    if r != 0 {
        return Err(os_error(r));
    }
    let text = sid_text(owner);
    // SAFETY: the descriptor GetSecurityInfo allocated (`owner` points into it).
    unsafe { LocalFree(sd) };
    text.map(|t| id_of_sid_text(&t)).ok_or_else(|| io::Error::other("the file's owner has no SID"))
}

impl Dir {
    /// Opens the directory at `path`.
    pub(crate) fn open(path: &Path) -> Result<Dir, Refusal> {
        let handle = create(
            path,
            FILE_READ_ATTRIBUTES,
            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
            OPEN_EXISTING,
            FILE_FLAG_BACKUP_SEMANTICS,
            None,
        )?;
        let found = info(&handle)?;
        if found.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY == 0 {
            return Err(Refusal::Io(io::Error::new(io::ErrorKind::NotADirectory, "not a directory")));
        }
        Ok(Dir { _handle: handle, path: path.to_path_buf(), id: id_of(&found) })
    }

    /// Its volume's serial number (the `dev` of Unix's `Dir`).
    pub(crate) fn dev(&self) -> u64 {
        self.id.0
    }

    /// Its file index on that volume (the `ino` of Unix's `Dir`).
    pub(crate) fn ino(&self) -> u64 {
        self.id.1
    }

    /// Its path, as it was opened.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The names in it.
    pub(crate) fn names(&self) -> io::Result<Vec<std::ffi::OsString>> {
        Ok(std::fs::read_dir(&self.path)?.filter_map(|e| e.ok().map(|e| e.file_name())).collect())
    }

    /// The path of `name` in it, when `name` is one file name.
    fn join(&self, name: &OsStr) -> io::Result<PathBuf> {
        let units: Vec<u16> = name.encode_wide().collect();
        let bad = units.is_empty()
            || name == "."
            || name == ".."
            || units
                .iter()
                .any(|&c| c == 0 || c == u16::from(b'/') || c == u16::from(b'\\') || c == u16::from(b':'));
        if bad {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a file name"));
        }
        Ok(self.path.join(name))
    }
}

/// How [`open_in`] opens a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// This user's own file, read and written, created with `mode` when missing (`None`:
    /// never created). Created, it is a record (kept from removal while open); opened only,
    /// a state file (which may be replaced by a rename while open) or a record to remove.
    Own(Option<u32>),
    /// A new file that did not exist, with `mode`: temporaries.
    New(u32),
    /// Another user's (or any) file, read only, never created: the caller checks its owner.
    Read,
}

/// The security attributes of a file this process creates: its owner is this process's user
/// (not the token's default owner, which is the Administrators group for an elevated
/// administrator), so that the id in a record's name is its file's owner's; and a file
/// created private (a Unix mode without group or others' bits) gets an ACL that grants its
/// owner alone, protected from the directory's (others inherit the directory's).
struct Creator {
    sd: *mut std::ffi::c_void,
    attributes: SECURITY_ATTRIBUTES,
}

impl Creator {
    fn new(private: bool) -> Option<Creator> {
        let user = token_user().as_ref()?;
        let dacl = if private { format!("D:P(A;;FA;;;{})", user.sid) } else { String::new() };
        let sddl = wide(OsStr::new(&format!("O:{}{dacl}", user.sid)));
        let mut sd: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: a NUL-terminated SDDL string and an out-pointer (LocalAlloc'd).
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                sddl.as_ptr(),
                SDDL_REVISION_1,
                &mut sd,
                std::ptr::null_mut(),
            )
        } != 0;
        ok.then_some(Creator {
            sd,
            attributes: SECURITY_ATTRIBUTES {
                nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
                lpSecurityDescriptor: sd,
                bInheritHandle: 0,
            },
        })
    }
}

impl Drop for Creator {
    fn drop(&mut self) {
        // SAFETY: allocated by ConvertStringSecurityDescriptorToSecurityDescriptorW.
        unsafe { LocalFree(self.sd) };
    }
}

/// How long an open waits for another process's momentary hold on a file (a removal under
/// way holds it for an instant) before it reports the failure.
const SHARING_WAIT: Duration = Duration::from_secs(1);

/// Opens `name` in `dir`: the one function through which the library opens the files it
/// creates or reads (see the module docs). Returns the file and what was found of it.
pub(crate) fn open_in(dir: &Dir, name: &OsStr, access: Access) -> Result<(File, Meta), Refusal> {
    let path = dir.join(name)?;
    let (rights, share, disposition, mode) = match access {
        Access::Own(Some(mode)) => {
            (GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, OPEN_ALWAYS, mode)
        }
        Access::Own(None) => (
            GENERIC_READ | GENERIC_WRITE,
            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
            OPEN_EXISTING,
            0,
        ),
        Access::New(mode) => {
            (GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, CREATE_NEW, mode)
        }
        Access::Read => (GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, OPEN_EXISTING, 0),
    };
    let creator = match access {
        Access::Own(Some(_)) | Access::New(_) => Creator::new(mode & 0o077 == 0),
        _ => None,
    };
    let started = Instant::now();
    let file = loop {
        match create(
            &path,
            rights,
            share,
            disposition,
            FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT,
            creator.as_ref().map(|c| &c.attributes),
        ) {
            Ok(file) => break file,
            Err(e) => {
                let code = e.raw_os_error().map(|c| c as u32);
                if code == Some(ERROR_ACCESS_DENIED) {
                    // A directory (which CreateFileW opens only with backup semantics)?
                    let name = wide(path.as_os_str());
                    // SAFETY: a NUL-terminated wide path.
                    let attributes = unsafe { GetFileAttributesW(name.as_ptr()) };
                    if attributes != INVALID_FILE_ATTRIBUTES && attributes & FILE_ATTRIBUTE_DIRECTORY != 0 {
                        return Err(Refusal::NotRegular("a directory"));
                    }
                }
                // Another process removing the file holds it for an instant (sharing
                // violation), and a file being removed cannot be opened (access denied).
                let transient = matches!(code, Some(ERROR_SHARING_VIOLATION) | Some(ERROR_ACCESS_DENIED));
                if transient && started.elapsed() < SHARING_WAIT {
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                }
                return Err(Refusal::Io(e));
            }
        }
    };
    // SAFETY: a valid handle.
    if unsafe { GetFileType(file.as_raw_handle() as HANDLE) } != FILE_TYPE_DISK {
        return Err(Refusal::NotRegular("a device"));
    }
    let found = info(&file)?;
    if found.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Err(Refusal::NotRegular("a symbolic link or junction"));
    }
    if found.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY != 0 {
        return Err(Refusal::NotRegular("a directory"));
    }
    let owner = owner_of(&file)?;
    if access != Access::Read {
        if owner != euid() {
            return Err(Refusal::Owner { uid: owner });
        }
        if found.nNumberOfLinks > 1 {
            return Err(Refusal::Links(u64::from(found.nNumberOfLinks)));
        }
    }
    Ok((file, Meta { id: id_of(&found), owner, shared_write: false }))
}

/// Reads at most `max` bytes from the start of `file`.
pub(crate) fn read_bounded(file: &File, max: usize) -> io::Result<Vec<u8>> {
    use std::os::windows::fs::FileExt;
    super::read_up_to(max, |buf, at| file.seek_read(buf, at))
}

/// Removes the record `name` in `dir`, which `file` (opened with [`Access::Own`]`(None)`)
/// holds open: through a handle opened for deletion, which Windows refuses while any other
/// process has the record open (they deny deletion to others).
pub(crate) fn remove_open(dir: &Dir, name: &OsStr, file: &File) -> io::Result<()> {
    let _ = file;
    let path = dir.join(name)?;
    let doomed = create(
        &path,
        DELETE,
        FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
        OPEN_EXISTING,
        FILE_FLAG_OPEN_REPARSE_POINT,
        None,
    )?;
    let disposition = FILE_DISPOSITION_INFO { DeleteFile: true };
    // SAFETY: a handle opened with DELETE access and a disposition of the class's size.
    let ok = unsafe {
        SetFileInformationByHandle(
            doomed.as_raw_handle() as HANDLE,
            FileDispositionInfo,
            (&disposition as *const FILE_DISPOSITION_INFO).cast(),
            std::mem::size_of::<FILE_DISPOSITION_INFO>() as u32,
        )
    } != 0;
    if ok {
        Ok(())
    } else {
        Err(os_error(last_error()))
    }
}

/// Removes `name` from `dir`.
pub(crate) fn remove_in(dir: &Dir, name: &OsStr) -> io::Result<()> {
    let path = wide(dir.join(name)?.as_os_str());
    // SAFETY: a NUL-terminated wide path.
    if unsafe { DeleteFileW(path.as_ptr()) } != 0 {
        Ok(())
    } else {
        Err(os_error(last_error()))
    }
}

/// Renames `from` to `to`, both in `dir`, replacing `to` (written through to the disk before
/// it returns).
pub(crate) fn rename_in(dir: &Dir, from: &OsStr, to: &OsStr) -> io::Result<()> {
    let (from, to) = (wide(dir.join(from)?.as_os_str()), wide(dir.join(to)?.as_os_str()));
    let started = Instant::now();
    loop {
        // SAFETY: NUL-terminated wide paths.
        if unsafe {
            MoveFileExW(from.as_ptr(), to.as_ptr(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)
        } != 0
        {
            return Ok(());
        }
        let code = last_error();
        if matches!(code, ERROR_SHARING_VIOLATION | ERROR_ACCESS_DENIED) && started.elapsed() < SHARING_WAIT {
            std::thread::sleep(Duration::from_millis(2));
            continue;
        }
        return Err(os_error(code));
    }
}

/// Makes `dir`'s entries durable: [`rename_in`] wrote through already.
pub(crate) fn sync_dir(dir: &Dir) -> io::Result<()> {
    let _ = dir;
    Ok(())
}

/// A file's length, and whether a name still holds it: always, for a file this library
/// opened (its share modes keep it from being removed or replaced while open).
pub(crate) fn linked_len(file: &File) -> io::Result<(bool, u64)> {
    Ok((true, file.metadata()?.len()))
}

/// The file that `name` in `dir` is now: `Ok(None)` when the name is gone (or being
/// removed).
pub(crate) fn id_in(dir: &Dir, name: &OsStr) -> io::Result<Option<FileId>> {
    let path = dir.join(name)?;
    match create(
        &path,
        FILE_READ_ATTRIBUTES,
        FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
        OPEN_EXISTING,
        FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT,
        None,
    ) {
        Ok(file) => Ok(Some(id_of(&info(&file)?))),
        Err(e)
            if matches!(
                e.raw_os_error().map(|c| c as u32),
                Some(ERROR_FILE_NOT_FOUND) | Some(ERROR_PATH_NOT_FOUND) | Some(ERROR_ACCESS_DENIED)
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The name of user `uid`: this user's account, or its id for another's.
pub(crate) fn user_name(uid: u32) -> String {
    match token_user() {
        Some(Account { name: Some(name), .. }) if uid == euid() => format!("user {name} (id {uid})"),
        _ => format!("the user of id {uid}"),
    }
}

/// Windows has no `/proc/uptime`: the time-base check is not made.
pub(crate) fn uptime_ns() -> Option<u64> {
    None
}

/// Nor a boot time read beside the monotonic clock (see [`uptime_ns`]).
pub(crate) fn boot_and_monotonic_ns() -> Option<(u64, u64)> {
    None
}

/// Windows names no boot here (see the module docs).
pub(crate) fn boot_id() -> Option<[u8; 36]> {
    None
}

/// `%ProgramData%\libsnowflake` (made when missing): every user may create files in it and
/// read the others', and write only their own.
pub(crate) fn default_record_dir() -> PathBuf {
    let base = std::env::var_os("ProgramData")
        .filter(|p| !p.is_empty())
        .map_or_else(|| PathBuf::from(r"C:\ProgramData"), PathBuf::from);
    let dir = base.join("libsnowflake");
    // A failure shows when the directory is opened.
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// Fills `buf` from the system's random source; `false` when there is none to be had.
pub(crate) fn random_bytes(buf: &mut [u8]) -> bool {
    // SAFETY: a buffer of the length given.
    unsafe {
        BCryptGenRandom(
            std::ptr::null_mut(),
            buf.as_mut_ptr(),
            buf.len() as u32,
            BCRYPT_USE_SYSTEM_PREFERRED_RNG,
        ) == 0
    }
}

/// The process id.
pub(crate) fn pid() -> u32 {
    std::process::id()
}

/// Whether process `pid` exists (one that may not be opened counts too).
pub(crate) fn process_exists(pid: u32) -> bool {
    // SAFETY: opening a process for a query only.
    let h = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if h.is_null() {
        return last_error() == ERROR_ACCESS_DENIED;
    }
    let mut code = 0u32;
    // SAFETY: a valid process handle and out-pointer.
    let ok = unsafe { GetExitCodeProcess(h, &mut code) } != 0;
    // SAFETY: the handle opened above.
    unsafe { CloseHandle(h) };
    !ok || code == STILL_ACTIVE as u32
}

/// Containers are not recognised on Windows.
pub(crate) fn container() -> Option<&'static str> {
    None
}

// ---------------------------------------------------------------------------------------------
// Locks.

/// The byte whose exclusive lock stands for Unix's `flock` (the set-up lock, a state file's
/// lock, a host lease's users): past every other lock's range.
const FLOCK_AT: u64 = 1 << 48;

/// Locks `len` bytes at `at` without waiting: `Ok(false)` when another open file holds a
/// conflicting lock (or this one holds one there already).
fn lock_range(file: &File, at: u64, len: u64, exclusive: bool) -> io::Result<bool> {
    let mut ov = OVERLAPPED::default();
    ov.Anonymous.Anonymous.Offset = at as u32;
    ov.Anonymous.Anonymous.OffsetHigh = (at >> 32) as u32;
    let flags = LOCKFILE_FAIL_IMMEDIATELY | if exclusive { LOCKFILE_EXCLUSIVE_LOCK } else { 0 };
    // SAFETY: a valid, synchronous handle and an OVERLAPPED that names the offset.
    if unsafe {
        LockFileEx(file.as_raw_handle() as HANDLE, flags, 0, len as u32, (len >> 32) as u32, &mut ov)
    } != 0
    {
        return Ok(true);
    }
    match last_error() {
        ERROR_LOCK_VIOLATION | ERROR_IO_PENDING => Ok(false),
        code => Err(os_error(code)),
    }
}

fn unlock_range(file: &File, at: u64, len: u64) {
    let mut ov = OVERLAPPED::default();
    ov.Anonymous.Anonymous.Offset = at as u32;
    ov.Anonymous.Anonymous.OffsetHigh = (at >> 32) as u32;
    // SAFETY: a valid handle and the range of a lock it holds.
    unsafe { UnlockFileEx(file.as_raw_handle() as HANDLE, 0, len as u32, (len >> 32) as u32, &mut ov) };
}

/// An exclusive lock for a moment, as `flock` is on Unix, released when dropped (or when the
/// file is closed).
pub(crate) struct Flock<'a>(&'a File);

impl<'a> Flock<'a> {
    /// Takes the lock, waiting until `deadline` at most (`None`: one try). `Ok(None)` when
    /// another open file still holds it then.
    pub(crate) fn within(file: &'a File, deadline: Option<Instant>) -> io::Result<Option<Flock<'a>>> {
        let mut pause = Duration::from_micros(20);
        loop {
            if lock_range(file, FLOCK_AT, 1, true)? {
                return Ok(Some(Flock(file)));
            }
            let now = Instant::now();
            match deadline {
                Some(d) if now < d => std::thread::sleep(pause.min(d - now)),
                _ => return Ok(None),
            }
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }
}

impl Drop for Flock<'_> {
    fn drop(&mut self) {
        unlock_range(self.0, FLOCK_AT, 1);
    }
}

/// Windows does not say who holds a lock.
pub(crate) fn lock_holder(file: &File) -> Option<u32> {
    let _ = file;
    None
}

/// A host record's set-up lock: an exclusive lock on a byte of the record apart from its
/// users' lock, released when dropped.
pub(crate) struct Setup<'a> {
    _lock: Flock<'a>,
}

/// Takes the set-up lock of the record `file`, waiting until `deadline` at most.
pub(crate) fn setup_lock<'a>(
    dir: &Dir,
    name: &OsStr,
    file: &'a File,
    deadline: Option<Instant>,
) -> io::Result<Option<Setup<'a>>> {
    let _ = (dir, name);
    Ok(Flock::within(file, deadline)?.map(|lock| Setup { _lock: lock }))
}

/// Windows does not say who holds a lock.
pub(crate) fn setup_holder(file: &File) -> Option<u32> {
    let _ = file;
    None
}

/// The locks that count a host record's users and name its processes (see `coord::arbiter`,
/// whose offsets they take): `LockFileEx` byte ranges, held per open file.
pub(crate) mod locks {
    use super::{lock_range, unlock_range, Dir, FileId};
    use std::fs::File;
    use std::io;
    use std::time::{Duration, Instant};

    /// The beacons that processes hold on files that may no longer have a name.
    #[allow(dead_code)]
    pub(crate) enum Beacons {
        /// The kernel lists them (Linux).
        Listed(Vec<(FileId, u64)>),
        /// The kernel lists no locks.
        Unlisted,
        /// A record in use cannot be removed or replaced here: nothing to look for.
        Unneeded,
    }

    /// How many processes [`marked`] names at most.
    const NAMED: usize = 64;

    /// Takes the users' lock of `file` at byte `at`, shared or exclusive, without waiting:
    /// `Ok(false)` when another open file holds a conflicting one. Another process's look at
    /// the record ([`taken`]) holds it exclusively for an instant, so a refusal is tried
    /// again for a few milliseconds.
    pub(crate) fn take(file: &File, at: u64, exclusive: bool) -> io::Result<bool> {
        for _ in 0..40 {
            if lock_range(file, at, 1, exclusive)? {
                return Ok(true);
            }
            std::thread::sleep(Duration::from_micros(250));
        }
        Ok(false)
    }

    /// Whether another open file holds the users' lock at `at`, asked through an open file
    /// that holds none there: an exclusive lock tried and let go at once.
    pub(crate) fn taken(file: &File, at: u64) -> io::Result<bool> {
        if lock_range(file, at, 1, true)? {
            unlock_range(file, at, 1);
            return Ok(false);
        }
        Ok(true)
    }

    /// Whether an open file other than `file`, which holds the users' lock (`exclusive`ly or
    /// not), holds it too: beside a shared lock, whether another process marked the record
    /// (this process's own mark aside).
    pub(crate) fn taken_by_others(file: &File, at: u64, exclusive: bool, marks_at: u64) -> io::Result<bool> {
        let _ = at;
        if exclusive {
            return Ok(false);
        }
        let mine = marks_at + u64::from(super::pid());
        for (lo, hi) in [(marks_at, mine), (mine + 1, marks_at + (1 << 32))] {
            if lo < hi {
                if !lock_range(file, lo, hi - lo, true)? {
                    return Ok(true);
                }
                unlock_range(file, lo, hi - lo);
            }
        }
        Ok(false)
    }

    /// Marks `file` as used by this process: a shared lock at `marks_at + pid`, tried again
    /// for up to a second while another process's look holds its range.
    pub(crate) fn mark_process(file: &File, marks_at: u64) {
        let at = marks_at + u64::from(super::pid());
        let deadline = Instant::now() + Duration::from_secs(1);
        while let Ok(false) = lock_range(file, at, 1, false) {
            if Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// The other live processes that marked `file`, found by trying ranges of marks (halves
    /// of a range that is held, down to single marks).
    pub(crate) fn marked(file: &File, marks_at: u64) -> Vec<u32> {
        fn look(file: &File, lo: u64, hi: u64, skip: u64, out: &mut Vec<u64>) {
            if lo >= hi || out.len() >= NAMED {
                return;
            }
            if (lo..hi).contains(&skip) {
                look(file, lo, skip, skip, out);
                look(file, skip + 1, hi, skip, out);
                return;
            }
            match lock_range(file, lo, hi - lo, true) {
                Ok(true) => unlock_range(file, lo, hi - lo),
                Ok(false) if hi - lo == 1 => out.push(lo),
                Ok(false) => {
                    let mid = lo + (hi - lo) / 2;
                    look(file, lo, mid, skip, out);
                    look(file, mid, hi, skip, out);
                }
                Err(_) => {}
            }
        }
        let mut found = Vec::new();
        look(file, marks_at, marks_at + (1 << 32), marks_at + u64::from(super::pid()), &mut found);
        found.into_iter().map(|at| (at - marks_at) as u32).filter(|&p| super::process_exists(p)).collect()
    }

    /// No beacons are needed here (see the module docs).
    pub(crate) fn beacon(file: &File, at: u64, len: u64) {
        let _ = (file, at, len);
    }

    /// No beacons are needed here: a record in use cannot be removed.
    pub(crate) fn beacons(dir: &Dir, at: u64) -> Beacons {
        let _ = (dir, at);
        Beacons::Unneeded
    }
}

// ---------------------------------------------------------------------------------------------
// Shared mappings.

/// A shared, writable view of the first `len` bytes of a file. Words in it are only accessed
/// as atomics, or as bytes written under the file's lock. Windows refuses to truncate a file
/// below a mapped view, so the view never faults.
pub(crate) struct Map {
    /// The view's bytes (their accessors are `View`'s, through `Deref`).
    pub(super) view: View,
    mapping: HANDLE,
}

// SAFETY: the view is only accessed through atomics, or through bytes that are written under
// the file's lock and read after it (see `coord::arbiter`).
unsafe impl Send for Map {}
unsafe impl Sync for Map {}

impl Map {
    /// Maps `len` bytes of `file` (which must be at least that long), shared and writable.
    pub(crate) fn shared(file: &File, len: usize) -> io::Result<Map> {
        // SAFETY: a valid handle opened for reading and writing; the size is the file's.
        let mapping = unsafe {
            CreateFileMappingW(
                file.as_raw_handle() as HANDLE,
                std::ptr::null(),
                PAGE_READWRITE,
                0,
                0,
                std::ptr::null(),
            )
        };
        if mapping.is_null() {
            return Err(os_error(last_error()));
        }
        // SAFETY: a mapping just made, viewed from its start.
        let view: MEMORY_MAPPED_VIEW_ADDRESS =
            unsafe { MapViewOfFile(mapping, FILE_MAP_READ | FILE_MAP_WRITE, 0, 0, len) };
        if view.Value.is_null() {
            let e = os_error(last_error());
            // SAFETY: the mapping made above.
            unsafe { CloseHandle(mapping) };
            return Err(e);
        }
        Ok(Map { view: View { ptr: view.Value.cast(), len }, mapping })
    }

    /// A file under a view cannot be truncated on Windows.
    pub(crate) fn truncated(&self) -> bool {
        false
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: the view and mapping made in `shared`, released once.
        unsafe {
            UnmapViewOfFile(MEMORY_MAPPED_VIEW_ADDRESS { Value: self.view.ptr.cast() });
            CloseHandle(self.mapping);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// No fork(): the generation stays 0, the gate and the hooks are empty.

/// Registers `f` to run when the process exits normally, or when the library is unloaded
/// before (a DLL's C runtime runs its own `atexit` table when it is detached).
pub(crate) fn at_exit(f: extern "C" fn()) {
    extern "C" {
        fn atexit(f: extern "C" fn()) -> i32;
    }
    // SAFETY: `f` is an `extern "C"` function that lives as long as the library.
    unsafe { atexit(f) };
}

/// Windows has no `fork()`: nothing to register.
pub(crate) fn at_fork(prepare: extern "C" fn(), parent: extern "C" fn(), child: extern "C" fn()) {
    let _ = (prepare, parent, child);
}

/// Always 0: no process here is a copy of another.
pub(crate) fn fork_generation() -> u64 {
    0
}

/// Always 0 (see [`fork_generation`]).
#[inline]
pub(crate) fn current_fork_generation() -> u64 {
    0
}

/// The fork gate of Unix, empty here.
pub(crate) struct ForkGate(PhantomData<*const ()>);

impl ForkGate {
    /// Enters the (empty) gate.
    pub(crate) fn enter() -> ForkGate {
        ForkGate(PhantomData)
    }
}

/// Whether a child of `fork()` keeps a [`HeldLock`]: moot here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(dead_code)]
pub(crate) enum InChild {
    Dropped,
    Kept,
}

/// A lock (Unix's `flock`: an exclusive or shared lock on one byte) held on a file for as
/// long as this value lives, released when dropped or when the process ends.
pub(crate) struct HeldLock {
    file: File,
}

impl HeldLock {
    /// Locks `file` (exclusively, or shared) without waiting: `Ok(None)` when another open
    /// file holds a conflicting lock.
    pub(crate) fn try_take(file: File, exclusive: bool, in_child: InChild) -> io::Result<Option<HeldLock>> {
        let _ = in_child;
        if !lock_range(&file, FLOCK_AT, 1, exclusive)? {
            return Ok(None);
        }
        Ok(Some(HeldLock { file }))
    }
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        unlock_range(&self.file, FLOCK_AT, 1);
    }
}

/// Nothing to do without `fork()`.
pub(crate) fn drop_in_child(file: &File) {
    let _ = file;
}

/// Nothing to do without `fork()`.
pub(crate) fn keep_in_child(file: &File) {
    let _ = file;
}

/// Nothing to do without `fork()`: every word is kept.
pub(crate) fn zero_in_child(word: &AtomicU64) -> bool {
    let _ = word;
    true
}

/// Nothing to do without `fork()`.
pub(crate) fn unzero_in_child(word: &AtomicU64) {
    let _ = word;
}
