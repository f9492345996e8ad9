//! The length × depth heatmap of `gen score`, as SVG and PNG (plotters, with an embedded font
//! so no system fonts are needed).

use std::path::Path;
use std::sync::Once;

use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::harness::tally::GridScore;

static FONT: Once = Once::new();

fn register_font() {
    FONT.call_once(|| {
        // DejaVu Sans is a valid font: registering it cannot fail.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            dejavu::sans::regular(),
        );
    });
}

/// Red (0 %) through yellow to green (100 %), the usual needle-in-a-haystack palette.
pub fn colour(accuracy: f64) -> RGBColor {
    let a = accuracy.clamp(0.0, 1.0);
    let (lo, mid, hi) = (
        (215.0, 48.0, 39.0),
        (254.0, 224.0, 139.0),
        (26.0, 152.0, 80.0),
    );
    let mix = |x: (f64, f64, f64), y: (f64, f64, f64), t: f64| {
        RGBColor(
            (x.0 + (y.0 - x.0) * t).round() as u8,
            (x.1 + (y.1 - x.1) * t).round() as u8,
            (x.2 + (y.2 - x.2) * t).round() as u8,
        )
    };
    if a < 0.5 {
        mix(lo, mid, a * 2.0)
    } else {
        mix(mid, hi, (a - 0.5) * 2.0)
    }
}

/// Pixel geometry of the grid.
struct Layout {
    lengths: Vec<u64>,
    depths: Vec<Option<f64>>,
    left: i32,
    top: i32,
    cell_w: i32,
    cell_h: i32,
    width: u32,
    height: u32,
}

impl Layout {
    /// The grid's layout, wide enough for `title` at the title's size (a long config name in
    /// a one-length grid was clipped at both sides).
    fn new(cells: &[GridScore], title: &str) -> Layout {
        let mut lengths: Vec<u64> = cells.iter().map(|c| c.length).collect();
        lengths.sort_unstable();
        lengths.dedup();
        let mut depths: Vec<Option<f64>> = cells.iter().map(|c| c.depth).collect();
        depths.sort_by(|a, b| a.unwrap_or(-1.0).total_cmp(&b.unwrap_or(-1.0)));
        depths.dedup();
        let cell_w = (960 / lengths.len().max(1) as i32).clamp(24, 110);
        let cell_h = (560 / depths.len().max(1) as i32).clamp(14, 48);
        let (left, top) = (120, 60);
        let grid_width = left + cell_w * lengths.len() as i32 + 140;
        // 20-pixel sans-serif glyphs are at most about 12 pixels wide on average.
        let title_width = 12 * title.chars().count() as i32 + 40;
        let width = grid_width.max(title_width) as u32;
        let height = (top + cell_h * depths.len() as i32 + 80) as u32;
        Layout {
            lengths,
            depths,
            left,
            top,
            cell_w,
            cell_h,
            width,
            height,
        }
    }
}

fn human(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{}m", n >> 20)
    } else if n >= 1024 && n.is_multiple_of(1024) {
        format!("{}k", n >> 10)
    } else {
        n.to_string()
    }
}

fn paint<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    cells: &[GridScore],
    l: &Layout,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("cannot draw the heatmap: {e}");
    area.fill(&WHITE).map_err(err)?;
    let centred = |size: i32| {
        ("sans-serif", size)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Center))
    };
    let text_at = |s: &str, x: i32, y: i32, size: i32| {
        area.draw(&Text::new(s.to_string(), (x, y), centred(size)))
    };
    text_at(title, l.width as i32 / 2, 24, 20).map_err(err)?;
    let bottom = l.top + l.cell_h * l.depths.len() as i32;
    for (j, depth) in l.depths.iter().enumerate() {
        let y = l.top + l.cell_h * j as i32;
        let label = depth.map_or("-".to_string(), |d| format!("{d:.0}%"));
        text_at(&label, l.left - 30, y + l.cell_h / 2, 13).map_err(err)?;
    }
    for (i, length) in l.lengths.iter().enumerate() {
        let x = l.left + l.cell_w * i as i32;
        text_at(&human(*length), x + l.cell_w / 2, bottom + 16, 13).map_err(err)?;
    }
    text_at(
        "context length (tokens)",
        l.left + l.cell_w * l.lengths.len() as i32 / 2,
        bottom + 44,
        15,
    )
    .map_err(err)?;
    text_at("depth", 36, l.top + (bottom - l.top) / 2, 15).map_err(err)?;
    for c in cells {
        let (Some(i), Some(j)) = (
            l.lengths.iter().position(|x| *x == c.length),
            l.depths.iter().position(|d| *d == c.depth),
        ) else {
            continue;
        };
        let (x, y) = (l.left + l.cell_w * i as i32, l.top + l.cell_h * j as i32);
        area.draw(&Rectangle::new(
            [(x, y), (x + l.cell_w, y + l.cell_h)],
            colour(c.tally.accuracy).filled(),
        ))
        .map_err(err)?;
        area.draw(&Rectangle::new(
            [(x, y), (x + l.cell_w, y + l.cell_h)],
            WHITE.stroke_width(1),
        ))
        .map_err(err)?;
        if l.cell_w >= 34 && l.cell_h >= 14 {
            let pct = format!("{:.0}", 100.0 * c.tally.accuracy);
            text_at(&pct, x + l.cell_w / 2, y + l.cell_h / 2, 12).map_err(err)?;
        }
    }
    // Colour scale.
    let sx = l.left + l.cell_w * l.lengths.len() as i32 + 40;
    let steps = 20;
    let scale_h = (bottom - l.top).max(100);
    for k in 0..steps {
        let y0 = l.top + scale_h * k / steps;
        let y1 = l.top + scale_h * (k + 1) / steps;
        let a = 1.0 - (k as f64 + 0.5) / steps as f64;
        area.draw(&Rectangle::new(
            [(sx, y0), (sx + 20, y1)],
            colour(a).filled(),
        ))
        .map_err(err)?;
    }
    text_at("100%", sx + 50, l.top + 4, 12).map_err(err)?;
    text_at("0%", sx + 46, l.top + scale_h - 4, 12).map_err(err)?;
    area.present().map_err(err)?;
    Ok(())
}

/// Draw `heatmap_<config>.svg` and `.png` into `out`.
pub fn draw(config: &str, cells: &[GridScore], out: &Path) -> Result<()> {
    register_font();
    let title = format!("{config}: accuracy by length and depth");
    let layout = Layout::new(cells, &title);
    let svg = out.join(format!("heatmap_{config}.svg"));
    {
        let area = SVGBackend::new(&svg, (layout.width, layout.height)).into_drawing_area();
        paint(&area, &title, cells, &layout)?;
    }
    let png = out.join(format!("heatmap_{config}.png"));
    let (w, h) = (layout.width, layout.height);
    let mut rgb = vec![0u8; 3 * w as usize * h as usize];
    {
        let area = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        paint(&area, &title, cells, &layout)?;
    }
    write_png(&png, &rgb, (w, h)).map_err(|e| anyhow!("cannot write {}: {e}", png.display()))
}

/// Encode an RGB buffer as PNG with the png crate directly, with the settings plotters' file
/// backend used through the `image` crate (fast deflate, adaptive filtering from Sub), so the
/// bytes are those it wrote, without compiling `image` and its JPEG and BMP codecs.
fn write_png(
    path: &Path,
    rgb: &[u8],
    (w, h): (u32, u32),
) -> std::result::Result<(), png::EncodingError> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(file, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fast);
    encoder.set_filter(png::FilterType::Sub);
    encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palette_ends() {
        assert_eq!(colour(0.0), RGBColor(215, 48, 39));
        assert_eq!(colour(1.0), RGBColor(26, 152, 80));
        assert_eq!(colour(0.5), RGBColor(254, 224, 139));
    }

    #[test]
    fn lengths_read_as_users_write_them() {
        assert_eq!(human(4096), "4k");
        assert_eq!(human(1 << 20), "1m");
        assert_eq!(human(32000), "32000");
    }

    #[test]
    fn a_long_title_widens_a_narrow_grid() {
        let cell = GridScore {
            length: 4096,
            depth: Some(50.0),
            tally: Default::default(),
        };
        let short = Layout::new(std::slice::from_ref(&cell), "x");
        let long_title = format!("{}: accuracy by length and depth", "c".repeat(60));
        let long = Layout::new(std::slice::from_ref(&cell), &long_title);
        assert_eq!(short.width, 120 + 110 + 140);
        // Wide enough for every glyph at 12 pixels with a margin on each side.
        assert!(long.width as usize >= 12 * long_title.chars().count() + 40);
    }
}
