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
    for seed in [0, 1, 3] {
        the_same_at_every_step(seed);
    }
}

fn the_same_at_every_step(seed: u64) {
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
        let bytes = image_pattern(e, &im, step * 20, seed);
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

/// A call's second image is not its first, nor the first shifted by one value: their difference
/// varies, as a Sub, NormDiff or Xor of the two must.
#[test]
fn two_images_of_a_call_differ_by_more_than_a_constant() {
    let e = Elem {
        scalar: Scalar::U8,
        lanes: 1,
    };
    let im = ImageLayout {
        step: 512,
        row_bytes: 64,
        rows: 4,
        offset: 8 * 512 + MARGIN_BYTES,
    };
    let roi = |seed| {
        let bytes = image_pattern(e, &im, 512 * 20, seed);
        (0..4u64)
            .flat_map(|y| {
                let start = (im.offset + y * 512) as usize;
                bytes[start..start + 64].to_vec()
            })
            .collect::<Vec<u8>>()
    };
    let (a, b) = (roi(0), roi(1));
    let differences: std::collections::BTreeSet<i16> =
        a.iter().zip(&b).map(|(x, y)| i16::from(*x) - i16::from(*y)).collect();
    assert!(differences.len() > 8, "{differences:?}");
    assert!(b.iter().all(|v| *v < 64));
}
