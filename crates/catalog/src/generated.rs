//! Functions known from NPP's headers alone (issue #45): each registered once, at run time, as a
//! [`Primitive`] past the rows, with its name and pixel sizes and no [`crate::Row`].

use crate::{Primitive, ROWS, bare_name};

/// A function known from NPP's headers alone: its name and the bytes of a pixel of its first
/// source and of its destination (one plane's where planar), which the rules' row-length
/// features need.
#[derive(Debug)]
pub(crate) struct Generated {
    pub(crate) name: &'static str,
    pub(crate) src_bytes_per_pixel: u64,
    pub(crate) dst_bytes_per_pixel: u64,
}

/// The functions registered by [`Primitive::generated`], in registration order: primitive
/// `ROWS.len() + i` is the `i`th. Each name is leaked once (a version declares about 5,600).
static GENERATED: std::sync::RwLock<Vec<&'static Generated>> = std::sync::RwLock::new(Vec::new());

fn generated_at(i: usize) -> &'static Generated {
    GENERATED.read().unwrap_or_else(std::sync::PoisonError::into_inner)[i]
}

impl Primitive {
    /// The primitive of a function no row describes, named `name` (bare, `Resize_8u_C3R`, or
    /// NVIDIA's spelling), with its pixels' bytes: registered on first use, the same primitive
    /// after. A row's name gives the row's primitive. Errors where the name was registered with
    /// other pixel sizes, or where more functions are registered than a primitive can number.
    pub fn generated(name: &str, src_bytes_per_pixel: u64, dst_bytes_per_pixel: u64) -> Result<Primitive, String> {
        let bare = bare_name(name);
        if let Some(p) = Primitive::all().find(|p| p.name() == bare) {
            return Ok(p);
        }
        let mut all = GENERATED.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(i) = all.iter().position(|g| g.name == bare) {
            let g = all[i];
            if (g.src_bytes_per_pixel, g.dst_bytes_per_pixel) != (src_bytes_per_pixel, dst_bytes_per_pixel) {
                return Err(format!(
                    "{bare} has pixels of {}/{} bytes (source/destination) and was given {src_bytes_per_pixel}/{dst_bytes_per_pixel}",
                    g.src_bytes_per_pixel, g.dst_bytes_per_pixel
                ));
            }
            return Ok(Primitive((ROWS.len() + i) as u16));
        }
        let index = u16::try_from(ROWS.len() + all.len())
            .map_err(|_| format!("more than {} functions registered: {bare} is one too many", u16::MAX))?;
        all.push(Box::leak(Box::new(Generated {
            name: Box::leak(bare.to_owned().into_boxed_str()),
            src_bytes_per_pixel,
            dst_bytes_per_pixel,
        })));
        Ok(Primitive(index))
    }

    /// Whether this is a function no row describes ([`Primitive::generated`]): it has no
    /// [`Row`], no CPU reference and no typed call; `nppbench run` cannot measure it.
    pub fn is_generated(self) -> bool {
        usize::from(self.0) >= ROWS.len()
    }

    pub(crate) fn generated_entry(self) -> Option<&'static Generated> {
        self.is_generated()
            .then(|| generated_at(usize::from(self.0) - ROWS.len()))
    }

    /// The generated primitive registered as `bare`, where one is.
    pub(crate) fn registered(bare: &str) -> Option<Primitive> {
        let all = GENERATED.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        let i = all.iter().position(|g| g.name == bare)?;
        Some(Primitive((ROWS.len() + i) as u16))
    }
}
