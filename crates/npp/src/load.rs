//! Finding and opening NPP by full path, without ever panicking: `libnppc` first (which says
//! where and which major version NPP is), then each other library on demand from the same place.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libloading::Library;
use nppbench_catalog::Library as NppLibrary;

use crate::sys;

/// The variable naming the folder NPP is loaded from when `--npp` is not given (the user's; the
/// engine's own `NPPBENCH_*` variables are in its protocol module). Spelled out again in
/// [`LoadError`]'s message, which must be a literal.
const NPP_DIR_ENV: &str = "NPPBENCH_NPP_DIR";

/// The NPP major versions nppbench knows, newest first.
const MAJORS: [&str; 2] = ["13", "12"];

/// Where to look for NPP, in order. An explicit folder (`--npp` or `NPPBENCH_NPP_DIR`) is the only
/// place tried when given, so a typo never silently measures another version.
#[derive(Debug, Clone)]
pub struct NppSearch {
    places: Vec<Place>,
}

#[derive(Debug, Clone)]
enum Place {
    Dir { dir: PathBuf, why: &'static str },
    SystemLoader,
}

impl NppSearch {
    /// The search order: `explicit` (`--npp`); else `NPPBENCH_NPP_DIR`; else `CUDA_HOME` and
    /// `CUDA_PATH` (`lib64`), `/usr/local/cuda/lib64`, then the system loader.
    pub fn new(explicit: Option<&Path>) -> NppSearch {
        NppSearch::with_env(explicit, |k| std::env::var_os(k).map(PathBuf::from))
    }

    /// As [`NppSearch::new`], reading variables through `env` (for tests).
    pub fn with_env(explicit: Option<&Path>, env: impl Fn(&str) -> Option<PathBuf>) -> NppSearch {
        if let Some(dir) = explicit {
            return NppSearch::only(dir.to_owned(), "--npp");
        }
        if let Some(dir) = env(NPP_DIR_ENV) {
            return NppSearch::only(dir, NPP_DIR_ENV);
        }
        let mut places = Vec::new();
        for (var, why) in [("CUDA_HOME", "CUDA_HOME"), ("CUDA_PATH", "CUDA_PATH")] {
            if let Some(home) = env(var) {
                places.push(Place::Dir {
                    dir: home.join("lib64"),
                    why,
                });
            }
        }
        places.push(Place::Dir {
            dir: PathBuf::from("/usr/local/cuda/lib64"),
            why: "default CUDA toolkit",
        });
        places.push(Place::SystemLoader);
        NppSearch { places }
    }

    fn only(dir: PathBuf, why: &'static str) -> NppSearch {
        // A folder of extracted wheels keeps the libraries under lib/.
        let places = [dir.clone(), dir.join("lib"), dir.join("lib64")]
            .into_iter()
            .map(|dir| Place::Dir { dir, why })
            .collect();
        NppSearch { places }
    }

    /// The places as a person would list them.
    pub fn describe(&self) -> Vec<String> {
        self.places.iter().map(|p| p.to_string()).collect()
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Dir { dir, why } => write!(f, "{} ({why})", dir.display()),
            Place::SystemLoader => f.write_str("the system loader (LD_LIBRARY_PATH, ld.so.cache)"),
        }
    }
}

/// `nppGetLibVersion`'s answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version {
    pub major: i32,
    pub minor: i32,
    pub build: i32,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.build)
    }
}

/// No usable NPP was found: every place tried, and why each failed.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot load NPP (libnppc, version 12 or 13); tried:\n{}\npoint --npp at a folder that holds libnppc.so.N and the other NPP libraries, or set NPPBENCH_NPP_DIR",
    .tried.iter().map(|(what, why)| format!("  {what}: {why}")).collect::<Vec<_>>().join("\n")
)]
pub struct LoadError {
    pub tried: Vec<(String, String)>,
}

/// The NPP libraries of one version in one place: `libnppc` open, the others opened when first
/// asked for and kept open (or the reason they could not be).
pub(crate) struct Libraries {
    /// The folder `libnppc` was found in; `None` for the system loader.
    dir: Option<PathBuf>,
    /// The major version in the file names (`13` in `libnppc.so.13`); `None` for `libnppc.so`.
    major: Option<&'static str>,
    nppc: (PathBuf, Library),
    others: [OnceLock<Result<(PathBuf, Library), String>>; NppLibrary::EVERY.len()],
}

fn soname(lib: &str, major: Option<&str>) -> String {
    match major {
        Some(m) => format!("lib{lib}.so.{m}"),
        None => format!("lib{lib}.so"),
    }
}

fn open(path: &Path) -> Result<Library, String> {
    // SAFETY: opening an NPP library runs its initialisers, which only set up its static CUDA
    // runtime.
    unsafe { Library::new(path) }.map_err(|e| e.to_string())
}

/// The file a library was really mapped from: a bare soname resolved through /proc/self/maps.
fn resolved(opened: &Path) -> PathBuf {
    // A path with a folder in it was opened as given; a bare soname went through the loader.
    if opened.parent().is_some_and(|p| !p.as_os_str().is_empty()) {
        return opened.canonicalize().unwrap_or_else(|_| opened.to_owned());
    }
    let name = opened.to_string_lossy();
    let stem = name.split(".so").next().unwrap_or(&name).to_owned();
    std::fs::read_to_string("/proc/self/maps")
        .ok()
        .and_then(|maps| {
            maps.lines()
                .filter_map(|l| l.split_whitespace().nth(5))
                .find(|p| {
                    Path::new(p)
                        .file_name()
                        .is_some_and(|f| f.to_string_lossy().starts_with(&format!("{stem}.so")))
                })
                .map(PathBuf::from)
        })
        .unwrap_or_else(|| opened.to_owned())
}

impl Libraries {
    /// Opens `libnppc` from the first place in `search` that holds it.
    pub(crate) fn load(search: &NppSearch) -> Result<(Libraries, sys::GetLibVersion), LoadError> {
        let mut tried = Vec::new();
        for place in &search.places {
            for major in MAJORS.iter().copied().map(Some).chain([None]) {
                let (dir, path) = match place {
                    Place::Dir { dir, .. } => (Some(dir.clone()), dir.join(soname("nppc", major))),
                    Place::SystemLoader => (None, PathBuf::from(soname("nppc", major))),
                };
                if dir.is_some() && !path.exists() {
                    tried.push((path.display().to_string(), "no such file".to_owned()));
                    continue;
                }
                let lib = match open(&path) {
                    Ok(lib) => lib,
                    Err(why) => {
                        tried.push((format!("{} in {place}", path.display()), why));
                        continue;
                    }
                };
                // SAFETY: the symbol has the signature nppdefs.h declares for nppGetLibVersion.
                let Ok(get_lib_version) = (unsafe { lib.get::<sys::GetLibVersion>(b"nppGetLibVersion\0") }).map(|s| *s)
                else {
                    tried.push((
                        format!("{} in {place}", path.display()),
                        "opened, but it exports no nppGetLibVersion: not an NPP core library".to_owned(),
                    ));
                    continue;
                };
                let libraries = Libraries {
                    dir,
                    major,
                    nppc: (resolved(&path), lib),
                    others: std::array::from_fn(|_| OnceLock::new()),
                };
                return Ok((libraries, get_lib_version));
            }
        }
        Err(LoadError { tried })
    }

    /// `libnppc`.
    pub(crate) fn core(&self) -> &Library {
        &self.nppc.1
    }

    /// The library `lib`, opened now if it was not yet, from where `libnppc` was found.
    pub(crate) fn get(&self, lib: NppLibrary) -> Result<&Library, String> {
        if lib == NppLibrary::Nppc {
            return Ok(self.core());
        }
        let index = NppLibrary::EVERY
            .iter()
            .position(|l| *l == lib)
            .expect("every library is in EVERY");
        self.others[index]
            .get_or_init(|| {
                let file = soname(lib.name(), self.major);
                let path = match &self.dir {
                    Some(dir) => dir.join(&file),
                    None => PathBuf::from(&file),
                };
                if self.dir.is_some() && !path.exists() {
                    return Err(missing_library(&file, &self.nppc.0));
                }
                open(&path).map(|l| (resolved(&path), l))
            })
            .as_ref()
            .map(|(_, l)| l)
            .map_err(Clone::clone)
    }

    /// A function of `lib` by name, or why there is none.
    pub(crate) fn symbol(&self, lib: NppLibrary, name: &str) -> Result<sys::RawFn, String> {
        let library = self.get(lib)?;
        let mut c_name = name.as_bytes().to_vec();
        c_name.push(0);
        // SAFETY: the symbol is only looked up here; the caller gives it its declared signature
        // before calling it.
        unsafe { library.get::<sys::RawFn>(c_name.as_slice()) }
            .map(|s| *s)
            .map_err(|_| format!("lib{lib}, version {}, does not export it", self.major.unwrap_or("?")))
    }

    /// A function by name of the library named `lib` (`nppial`), or why there is none (a
    /// library nppbench does not open is said so).
    pub(crate) fn symbol_named(&self, lib: &str, name: &str) -> Result<sys::RawFn, String> {
        let library = NppLibrary::EVERY
            .into_iter()
            .find(|l| l.name() == lib)
            .ok_or_else(|| format!("lib{lib} is not among the libraries nppbench opens"))?;
        self.symbol(library, name)
    }

    /// The files opened so far, `libnppc` first.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        let mut out = vec![self.nppc.0.clone()];
        out.extend(
            self.others
                .iter()
                .filter_map(|o| o.get().and_then(|r| r.as_ref().ok()).map(|(p, _)| p.clone())),
        );
        out
    }
}

/// The error of a library that is not in the folder `libnppc` was found in (`libnppif.so.12 is
/// missing beside /tmp/npp12/libnppc.so.12`): a copy of NPP without it.
fn missing_library(file: &str, nppc: &Path) -> String {
    format!("{file}{MISSING_BESIDE}{}", nppc.display())
}

const MISSING_BESIDE: &str = " is missing beside ";

/// Whether an error (a call-catalogue line's, say) is that of a library missing from NPP's
/// folder, so that the function was never called: a run resumed with the library calls it.
pub fn is_missing_library(error: &str) -> bool {
    error.contains(MISSING_BESIDE)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error of a library missing beside libnppc is told apart from other errors.
    #[test]
    fn a_missing_library_is_told_apart() {
        let e = missing_library("libnppif.so.12", Path::new("/n/libnppc.so.12"));
        assert_eq!(e, "libnppif.so.12 is missing beside /n/libnppc.so.12");
        assert!(is_missing_library(&format!("nppiFilter_8u_C1R_Ctx: {e}")));
        assert!(!is_missing_library("cuCtxSynchronize: CUDA_ERROR_MISALIGNED_ADDRESS"));
    }

    #[test]
    fn explicit_folder_is_the_only_place_tried() {
        let s = NppSearch::with_env(Some(Path::new("/opt/npp")), |_| Some(PathBuf::from("/env")));
        let places = s.describe();
        assert!(places.iter().all(|p| p.starts_with("/opt/npp")), "{places:?}");
    }

    #[test]
    fn default_order_is_cuda_home_then_toolkit_then_loader() {
        let s = NppSearch::with_env(None, |k| (k == "CUDA_HOME").then(|| PathBuf::from("/ch")));
        let places = s.describe();
        assert_eq!(places[0], "/ch/lib64 (CUDA_HOME)");
        assert_eq!(places[1], "/usr/local/cuda/lib64 (default CUDA toolkit)");
        assert!(places[2].starts_with("the system loader"));
    }

    #[test]
    fn missing_folder_lists_every_path_tried_without_panicking() {
        let dir = std::env::temp_dir().join("nppbench-no-such-npp");
        let err = Libraries::load(&NppSearch::new(Some(&dir)))
            .err()
            .expect("no NPP there");
        let msg = err.to_string();
        assert!(msg.contains("libnppc.so.13: no such file"), "{msg}");
        assert!(msg.contains("libnppc.so.12: no such file"), "{msg}");
        assert!(msg.contains("point --npp"), "{msg}");
    }

    #[test]
    fn a_folder_of_wrong_libraries_is_an_error() {
        let dir = std::env::temp_dir().join(format!("nppbench-wrong-npp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("libnppc.so.13"), b"not an ELF file").unwrap();
        let err = Libraries::load(&NppSearch::new(Some(&dir))).err().expect("not NPP");
        let msg = err.to_string();
        assert!(msg.contains("libnppc.so.13 in"), "{msg}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sonames() {
        assert_eq!(soname("nppc", Some("13")), "libnppc.so.13");
        assert_eq!(soname("nppidei", None), "libnppidei.so");
    }
}
