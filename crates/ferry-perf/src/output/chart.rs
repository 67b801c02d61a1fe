//! Charts like the reports' figures: the rate (top panel) and the queue manager's CPU
//! as % of the machine (bottom panel) against the number of requesters, one line per
//! series (size, persistence, workload). Requesters are on a log scale (the ramps
//! double); the rate axis turns logarithmic when the series differ more than 20-fold
//! (e.g. 256B next to 2MB). Invalid steps are drawn as red crosses, off the lines.
//!
//! The same drawing goes to an SVG (text left to the viewer's fonts) and a PNG (text
//! drawn with the DejaVu Sans subset in `assets/`, so no system font is needed).

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::report::{group_thousands, RunReport};

/// The chart's font: a Latin-1 subset of DejaVu Sans (license beside it in assets/).
static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans-subset.ttf");
static REGISTER: Once = Once::new();

/// Width and height of the charts, in pixels.
pub const SIZE: (u32, u32) = (1200, 900);

/// Line colours, one per series (the reports' figures use a handful of series).
const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(23, 190, 207),
];

fn register_font() {
    REGISTER.call_once(|| {
        // The font is compiled in; if it could not be parsed every text would fail to
        // draw, which the tests catch.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// The label of a series in a legend: its test name (which names a SHARECNV, or AMQP
/// sessions per connection, other than 10; native results written before it did get
/// it appended). Made unique by the caller.
pub fn series_label(run: &RunReport) -> String {
    let mut label = run.test.clone();
    // SHARECNV 0: an AMQP run, which names its sharing itself.
    if run.sharecnv != 10 && run.sharecnv != 0 && !label.contains("SHARECNV") {
        label.push_str(&format!(" SHARECNV {}", run.sharecnv));
    }
    label
}

/// The x range (requesters) of the series, widened so a single point is visible.
pub fn x_range(series: &[&RunReport]) -> (f64, f64) {
    let xs = series
        .iter()
        .flat_map(|s| s.steps.iter().map(|st| st.ferry.clients as f64));
    let (lo, hi) = xs.fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
    if lo > hi {
        (1.0, 2.0)
    } else if lo == hi {
        ((lo / 2.0).max(0.5), hi * 2.0)
    } else {
        (lo / 1.25, hi * 1.25)
    }
}

/// The y range of the rates and whether it needs a log scale (more than 20-fold
/// between the series' largest rates).
pub fn y_range(series: &[&RunReport]) -> (f64, f64, bool) {
    let peaks: Vec<f64> = series
        .iter()
        .map(|s| {
            s.steps
                .iter()
                .map(|st| st.ferry.window.rate)
                .fold(0.0, f64::max)
        })
        .filter(|&p| p > 0.0)
        .collect();
    let hi = peaks.iter().copied().fold(0.0, f64::max);
    let lo_peak = peaks.iter().copied().fold(f64::MAX, f64::min);
    if hi <= 0.0 {
        return (0.0, 1.0, false);
    }
    if hi / lo_peak > 20.0 {
        let lo = series
            .iter()
            .flat_map(|s| s.steps.iter().map(|st| st.ferry.window.rate))
            .filter(|&r| r > 0.0)
            .fold(f64::MAX, f64::min);
        (lo / 2.0, hi * 2.0, true)
    } else {
        (0.0, hi * 1.15, false)
    }
}

/// The requester counts that label the x axis.
fn x_keys(series: &[&RunReport]) -> Vec<f64> {
    let mut keys: Vec<f64> = series
        .iter()
        .flat_map(|s| s.steps.iter().map(|st| st.ferry.clients as f64))
        .collect();
    keys.sort_by(f64::total_cmp);
    keys.dedup();
    keys
}

type Points = Vec<(f64, f64)>;

/// A series' valid and invalid points of `value` against requesters.
fn points(
    run: &RunReport,
    value: impl Fn(&crate::report::StepReport) -> Option<f64>,
) -> (Points, Points) {
    let mut good = Vec::new();
    let mut bad = Vec::new();
    for st in &run.steps {
        if let Some(v) = value(st) {
            let p = (st.ferry.clients as f64, v);
            if st.ferry.valid {
                good.push(p);
            } else {
                bad.push(p);
            }
        }
    }
    good.sort_by(|a, b| a.0.total_cmp(&b.0));
    (good, bad)
}

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("cannot draw the chart: {e:?}")
}

/// The x axis's description: what the ramp counts for these series' workloads.
pub fn x_desc(series: &[&RunReport]) -> String {
    let what = |w: &str| match w {
        "SR-CC" => "Senders (one queue each)",
        "CONN" => "Clients connecting",
        "PS-CC" => "Subscribers (spread over the topics)",
        _ => "Requesters (clients)",
    };
    let mut kinds: Vec<&str> = series.iter().map(|s| what(&s.workload)).collect();
    kinds.dedup();
    format!("{}, log scale", kinds.join(" / "))
}

/// Draws one panel: `value` of every series against requesters.
macro_rules! panel {
    ($area:expr, $series:expr, $labels:expr, $xr:expr, $keys:expr, $yr:expr, $ydesc:expr, $yfmt:expr, $value:expr, $legend:expr) => {{
        let mut chart = ChartBuilder::on($area)
            .margin(12)
            .x_label_area_size(60)
            .y_label_area_size(110)
            .build_cartesian_2d(
                ($xr.0..$xr.1).log_scale().with_key_points($keys.clone()),
                $yr,
            )
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(x_desc($series))
            .y_desc($ydesc)
            .x_label_formatter(&|x: &f64| format!("{x:.0}"))
            .y_label_formatter(&$yfmt)
            .axis_desc_style(("sans-serif", 22))
            .label_style(("sans-serif", 18))
            .light_line_style(RGBColor(240, 240, 240))
            .x_max_light_lines(0)
            .y_max_light_lines(1)
            .draw()
            .map_err(err)?;
        for (i, run) in $series.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            let (good, bad) = points(run, $value);
            let line = chart
                .draw_series(LineSeries::new(good.clone(), colour.stroke_width(3)))
                .map_err(err)?;
            if $legend {
                line.label($labels[i].clone()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(3))
                });
            }
            chart
                .draw_series(good.iter().map(|&p| Circle::new(p, 5, colour.filled())))
                .map_err(err)?;
            chart
                .draw_series(bad.iter().map(|&p| Cross::new(p, 8, RED.stroke_width(3))))
                .map_err(err)?;
        }
        if $legend {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 18))
                .draw()
                .map_err(err)?;
        }
    }};
}

/// Draws the chart onto `root`.
fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    series: &[&RunReport],
    title: &str,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let root = root.titled(title, ("sans-serif", 30)).map_err(err)?;
    let (top, bottom) = root.split_vertically((58).percent_height());
    let mut labels: Vec<String> = series.iter().map(|s| series_label(s)).collect();
    for i in 0..labels.len() {
        if labels[..i].contains(&labels[i]) {
            labels[i] = format!("{} ({})", labels[i], i + 1);
        }
    }
    let xr = x_range(series);
    let keys = x_keys(series);
    let unit = series
        .first()
        .map_or("Round trips/s".to_string(), |s| s.rate_unit.clone());
    let (lo, hi, log) = y_range(series);
    let rate = |st: &crate::report::StepReport| Some(st.ferry.window.rate).filter(|r| *r > 0.0);
    let fmt = |v: &f64| group_thousands(*v);
    if log {
        let ydesc = format!("{unit} (log scale)");
        panel!(
            &top,
            series,
            labels,
            xr,
            keys,
            (lo..hi).log_scale(),
            ydesc,
            fmt,
            rate,
            true
        );
    } else {
        panel!(
            &top,
            series,
            labels,
            xr,
            keys,
            lo..hi,
            unit.as_str(),
            fmt,
            rate,
            true
        );
    }
    let cpu = |st: &crate::report::StepReport| st.ferry.window.server_cpu_pct;
    let pct = |v: &f64| format!("{v:.0}%");
    panel!(
        &bottom,
        series,
        labels,
        xr,
        keys,
        0.0..100.0,
        "Queue manager CPU, % of machine",
        pct,
        cpu,
        false
    );
    root.present().map_err(err)?;
    Ok(())
}

/// Draws the chart of `series` titled `title` into `svg` and `png`.
pub fn render(series: &[&RunReport], title: &str, svg: &Path, png: &Path) -> Result<(), String> {
    register_font();
    draw(
        SVGBackend::new(svg, SIZE).into_drawing_area(),
        series,
        title,
    )
    .map_err(|e| format!("{}: {e}", svg.display()))?;
    draw(
        BitMapBackend::new(png, SIZE).into_drawing_area(),
        series,
        title,
    )
    .map_err(|e| format!("{}: {e}", png.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::testdata::{document, series, step};

    #[test]
    fn ranges_follow_the_data() {
        let doc = document();
        let refs: Vec<&RunReport> = doc.series.iter().collect();
        assert_eq!(x_range(&refs), (0.8, 20.0));
        let (lo, hi, log) = y_range(&refs);
        assert!(!log && lo == 0.0 && (hi - 80_500.0).abs() < 1e-6, "{hi}");
        let small = series(
            "RR-CC",
            2 << 20,
            false,
            vec![step(1, 500.0, true), step(4, 1500.0, true)],
        );
        let mut refs2 = refs.clone();
        refs2.push(&small);
        let (lo, _, log) = y_range(&refs2);
        assert!(log && (lo - 250.0).abs() < 1e-6, "{lo}");
        let one = series("RR-CC", 2048, false, vec![step(8, 1.0, true)]);
        assert_eq!(x_range(&[&one]), (4.0, 16.0));
        assert_eq!(x_keys(&refs), vec![1.0, 4.0, 16.0]);
        assert_eq!(x_desc(&refs), "Requesters (clients), log scale");
        let sr = series("SR-CC", 2048, false, vec![]);
        assert_eq!(x_desc(&[&sr]), "Senders (one queue each), log scale");
    }

    #[test]
    fn svg_and_png_are_drawn() {
        let dir = tempfile::tempdir().expect("tempdir");
        let doc = document();
        let refs: Vec<&RunReport> = doc.series.iter().collect();
        let (svg, png) = (dir.path().join("c.svg"), dir.path().join("c.png"));
        render(&refs, "RR-CC (2KB)", &svg, &png).expect("drawn");
        let text = std::fs::read_to_string(&svg).expect("svg");
        assert!(
            text.contains("Requesters (clients), log scale"),
            "axis label"
        );
        assert!(text.contains("RR-CC (2KB Persistent)"), "legend");
        let bytes = std::fs::read(&png).expect("png");
        assert_eq!(&bytes[1..4], b"PNG");
    }
}
