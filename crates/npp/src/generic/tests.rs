//! The host side of a planned call: values as their C types' bytes, and images filled by position.

use super::*;

#[test]
fn values_are_passed_as_their_c_types_bytes() {
    assert_eq!(words(&scalar_bytes(Scalar::I32, -3.0)), vec![0xffff_fffd]);
    assert_eq!(
        words(&scalar_bytes(Scalar::F32, 0.75)),
        vec![u64::from(0.75f32.to_bits())]
    );
    assert_eq!(words(&scalar_bytes(Scalar::U8, 3.0)), vec![3]);
    let pair = words(&[7i32.to_le_bytes(), 9i32.to_le_bytes()].concat());
    assert_eq!(pair, vec![7 | (9 << 32)]);
}

#[test]
fn an_images_pattern_is_the_same_at_every_step() {
    let e = Elem {
        scalar: Scalar::U16,
        lanes: 1,
    };
    let at = |step: u64| {
        let im = ImageLayout {
            step,
            row_bytes: 128,
            rows: 4,
            offset: 8 * step + MARGIN_BYTES,
        };
        let bytes = image_pattern(e, &im, step * 20);
        // The ROI's rows, and a margin's bytes left of it.
        (0..4)
            .map(|y| {
                let start = (im.offset + y * step) as usize;
                bytes[start - 64..start + 128].to_vec()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(at(512), at(518));
    assert_eq!(at(512), at(1024));
}

#[test]
fn a_pattern_varies_and_stays_small_in_every_type() {
    let p = pattern(
        Elem {
            scalar: Scalar::F32,
            lanes: 1,
        },
        64,
    );
    let v: Vec<f32> = p.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    assert!(v.iter().all(|x| (0.0..64.0).contains(x)));
    assert!(v.iter().any(|x| *x != v[0]));
}
