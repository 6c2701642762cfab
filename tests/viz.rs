//! Pictures of the tree: statistics, layout, SVG, PNG, DOT, inspect, curves.

use std::sync::OnceLock;

use ant::observe::{Collect, Decision, EpochRecord};
use ant::spec::{BlockSpec, LayerSpec, Shape};
use ant::tree::{NodeKind, Topology, Tree, TreeModules};
use ant::viz::placement::{BoxRows, layout};
use ant::viz::stats::{NodeStats, node_stats, prob_bin};
use ant::viz::tree_svg::{TreePlot, tree_svg};
use ant::viz::{Format, curves, dot, inspect, model_stats, raster, render_curves, render_tree};
use ant::{Ant, AntParams, Dataset, Preset, Targets};

fn fc(d_in: usize, d_out: usize) -> BlockSpec {
    BlockSpec::new(vec![LayerSpec::Linear { d_in, d_out }])
}

fn fc_tanh(d_in: usize, d_out: usize) -> BlockSpec {
    BlockSpec::new(vec![LayerSpec::Linear { d_in, d_out }, LayerSpec::Tanh])
}

/// Root (FC 2->4 + tanh, router), a leaf, and an internal node with two leaves; the
/// right child is deepened (FC 4->4 + tanh).
fn five_nodes() -> Topology {
    let mut t = Topology::root(Shape::Flat { d: 2 }, vec![fc_tanh(2, 4)], fc(4, 3));
    let [_, r] = t.split(0, fc(4, 1), fc(4, 3), fc(4, 3));
    let [_, rr] = t.split(r, fc(4, 1), fc(4, 3), fc(4, 3));
    t.deepen(rr, fc_tanh(4, 4), fc(4, 3));
    t.validate().unwrap();
    t
}

/// A full tree of depth `d` (2^d leaves) with identity edges below the root.
fn full(d: usize) -> Topology {
    let mut t = Topology::root(Shape::Flat { d: 2 }, vec![], fc(2, 3));
    let mut frontier = vec![0];
    for _ in 0..d {
        let mut next = vec![];
        for i in frontier {
            next.extend(t.split(i, fc(2, 1), fc(2, 3), fc(2, 3)));
        }
        frontier = next;
    }
    t
}

/// 600 points in [-1,1]^2, 3 classes by angle.
fn data() -> Dataset {
    let x: Vec<f32> = (0..1200)
        .map(|i| ((i * 7919 + 13) % 2001) as f32 / 1000.0 - 1.0)
        .collect();
    let labels = x
        .chunks(2)
        .map(|p| {
            let a = p[1].atan2(p[0]) + std::f32::consts::PI;
            ((a / (2.0 * std::f32::consts::PI) * 3.0) as u32).min(2)
        })
        .collect();
    Dataset::new(
        x,
        vec![2],
        Targets::Classes {
            labels,
            n_classes: 3,
        },
    )
    .unwrap()
}

/// A small fitted model and its training records (fitted once per test binary).
fn fitted() -> &'static (Ant, Collect) {
    static M: OnceLock<(Ant, Collect)> = OnceLock::new();
    M.get_or_init(|| {
        let params = AntParams::new(Preset::Tabular)
            .with_width(8)
            .with_epochs_node(5)
            .with_refine_epochs(Some(1))
            .with_max_depth(2)
            .with_batch_size(64);
        let mut obs = Collect::default();
        let m = Ant::fit(params, &data(), &ant::default_device(), &mut obs).unwrap();
        (m, obs)
    })
}

/// The fitted model's weights replaced by fresh ones on the hand-built five-node tree.
fn five_node_model() -> Ant {
    let mut m = fitted().0.clone();
    let t = five_nodes();
    *m.tree_mut() = Tree::new(t.clone(), TreeModules::init(&t, &ant::default_device()));
    m
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn histograms_of_a_hand_built_case() {
    // 3 nodes: root, left, right. 4 samples with left-probabilities 0.9, 0.9, 0.2, 0.5.
    let t = full(1);
    let p = [0.9f32, 0.9, 0.2, 0.5];
    let reach: Vec<f32> = p.iter().flat_map(|&q| [1.0, q, 1.0 - q]).collect();
    let targets = Targets::Classes {
        labels: vec![0, 0, 1, 2],
        n_classes: 3,
    };
    let single = [1, 1, 2, 1];
    let s = node_stats(&t, &reach, &targets, Some(&single), 4);
    assert_eq!(s.len(), 3);
    // the root's histogram is the class counts
    assert_eq!(s[0].class_hist.as_deref(), Some(&[2.0, 1.0, 1.0][..]));
    assert!(close(s[0].mass, 4.0, 1e-6));
    // every node's is the reach-weighted count
    let l = s[1].class_hist.as_ref().unwrap();
    assert!(close(l[0], 1.8, 1e-6) && close(l[1], 0.2, 1e-6) && close(l[2], 0.5, 1e-6));
    let r = s[2].class_hist.as_ref().unwrap();
    assert!(close(r[0], 0.2, 1e-6) && close(r[1], 0.8, 1e-6) && close(r[2], 0.5, 1e-6));
    for x in &s {
        let sum: f64 = x.class_hist.as_ref().unwrap().iter().sum();
        assert!(close(sum, x.mass, 1e-6));
    }
    // router: bins of [0,1] in quarters, weighted by the root's reach (1 each)
    assert_eq!(s[0].left_hist.as_deref(), Some(&[1.0, 0.0, 1.0, 2.0][..]));
    assert!(s[1].left_hist.is_none() && s[2].left_hist.is_none());
    // single path
    assert_eq!(s[1].single_path_count, Some(3));
    assert_eq!(s[2].single_path_share, Some(0.25));
    assert_eq!(s[0].single_path_count, None);
    assert_eq!(s[0].top_classes(1), vec![(0, 0.5)]);
    assert_eq!(
        (prob_bin(1.0, 10), prob_bin(0.0, 10), prob_bin(0.55, 10)),
        (9, 0, 5)
    );
}

#[test]
fn regression_moments_are_reach_weighted() {
    let t = full(1);
    let reach = vec![1.0f32, 1.0, 0.0, 1.0, 0.5, 0.5, 1.0, 0.0, 1.0];
    let targets = Targets::Values {
        values: vec![1.0, 3.0, 5.0],
        dim: 1,
    };
    let s = node_stats(&t, &reach, &targets, None, 10);
    assert!(close(s[0].target_mean.as_ref().unwrap()[0], 3.0, 1e-9));
    // left: weights 1, 0.5, 0 on 1, 3, 5 -> mean 5/3
    let m = s[1].target_mean.as_ref().unwrap()[0];
    assert!(close(m, 5.0 / 3.0, 1e-6));
    let var = (1.0 * (1.0 - m).powi(2) + 0.5 * (3.0 - m).powi(2)) / 1.5;
    assert!(close(
        s[1].target_std.as_ref().unwrap()[0],
        var.sqrt(),
        1e-6
    ));
    assert!(s[0].class_hist.is_none());
}

#[test]
fn stats_of_a_model_add_up() {
    let m = five_node_model();
    let d = data();
    let s = model_stats(&m, &d, 10).unwrap();
    let Targets::Classes { labels, .. } = d.targets() else {
        unreachable!()
    };
    let mut counts = vec![0.0; 3];
    labels.iter().for_each(|&y| counts[y as usize] += 1.0);
    let root = s[0].class_hist.as_ref().unwrap();
    for c in 0..3 {
        assert!(close(root[c], counts[c], 1e-4), "{root:?} vs {counts:?}");
    }
    let t = m.topology();
    for (i, n) in t.nodes.iter().enumerate() {
        let h: f64 = s[i].class_hist.as_ref().unwrap().iter().sum();
        assert!(close(h, s[i].mass, 1e-4));
        if let Some([l, r]) = n.children() {
            assert!(close(s[l].mass + s[r].mass, s[i].mass, 1e-4));
            let lh: f64 = s[i].left_hist.as_ref().unwrap().iter().sum();
            assert!(close(lh, s[i].mass, 1e-4));
        }
    }
    let shares: f64 = s.iter().filter_map(|x| x.single_path_share).sum();
    assert!(close(shares, 1.0, 1e-9));
}

#[test]
fn layout_grows_for_wide_trees_without_overlaps() {
    let rows = BoxRows {
        box_h: 19.6,
        header: 3.6,
    };
    let small = layout(&five_nodes(), 1600.0, rows);
    assert_eq!(small.width, 1600.0);
    // 16 leaves (31 nodes) do not fit 1600 px at the minimum slot: the picture grows
    let t = full(4);
    let l = layout(&t, 1600.0, rows);
    assert!(
        l.width >= 16.0 * ant::viz::placement::MIN_SLOT,
        "{}",
        l.width
    );
    for i in 0..t.nodes.len() {
        for j in i + 1..t.nodes.len() {
            let (a, b) = (l.boxes[i], l.boxes[j]);
            let apart_x = a.left() + a.w <= b.left() || b.left() + b.w <= a.left();
            let apart_y = a.bottom() <= b.y || b.bottom() <= a.y;
            assert!(apart_x || apart_y, "boxes {i} and {j} overlap");
        }
        if let Some(p) = t.nodes[i].parent {
            assert!(l.boxes[p].bottom() < l.boxes[i].y);
        }
        assert!(l.boxes[i].left() >= 0.0 && l.boxes[i].left() + l.boxes[i].w <= l.width);
    }
    // children straddle their parent
    for (i, n) in t.nodes.iter().enumerate() {
        if let Some([a, b]) = n.children() {
            assert!(l.boxes[a].x < l.boxes[i].x && l.boxes[i].x < l.boxes[b].x);
        }
    }
}

fn node_groups<'a>(doc: &'a roxmltree::Document) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| {
            n.has_tag_name("g") && n.attribute("id").is_some_and(|i| i.starts_with("node-"))
        })
        .collect()
}

fn texts(n: roxmltree::Node) -> Vec<String> {
    n.descendants()
        .filter(|t| t.has_tag_name("text"))
        .map(|t| t.text().unwrap_or("").trim().to_string())
        .collect()
}

#[test]
fn svg_has_one_group_per_node_with_labels_and_histograms() {
    let m = five_node_model();
    let d = data();
    let stats: Vec<NodeStats> = model_stats(&m, &d, 10).unwrap();
    let t = m.topology();
    let svg = tree_svg(
        t,
        1600.0,
        &TreePlot {
            title: Some("test".into()),
            stats: Some(&stats),
            class_names: None,
        },
    );
    let doc = roxmltree::Document::parse(&svg).expect("the SVG is XML");
    let groups = node_groups(&doc);
    assert_eq!(groups.len(), t.nodes.len());
    for (i, g) in groups.iter().enumerate() {
        assert_eq!(g.attribute("id"), Some(format!("node-{i}").as_str()));
        let tx = texts(*g);
        assert!(tx.contains(&format!("node {i}")), "{tx:?}");
        let n = &t.nodes[i];
        let module = match &n.kind {
            NodeKind::Internal { router, .. } => format!("router: {}", router.label()),
            NodeKind::Leaf { solver } => format!("solver: {}", solver.label()),
        };
        assert!(tx.contains(&module), "{tx:?}");
        // red bars carry the reach-weighted counts; they sum to the node's mass
        let sum_bars = |class: &str| -> f64 {
            g.descendants()
                .filter(|h| h.attribute("class") == Some(class))
                .flat_map(|h| h.descendants())
                .filter(|b| b.attribute("class") == Some("bar"))
                .map(|b| b.attribute("data-weight").unwrap().parse::<f64>().unwrap())
                .sum()
        };
        assert!(close(sum_bars("class-hist"), stats[i].mass, 1e-4));
        if n.is_leaf() {
            assert_eq!(sum_bars("left-hist"), 0.0);
            assert!(tx.iter().any(|s| s.starts_with("single path:")), "{tx:?}");
        } else {
            assert!(close(sum_bars("left-hist"), stats[i].mass, 1e-4));
        }
    }
    // root's red bars equal the class counts
    let root_bars: Vec<f64> = groups[0]
        .descendants()
        .filter(|b| b.attribute("class") == Some("bar"))
        .take(3)
        .map(|b| b.attribute("data-weight").unwrap().parse().unwrap())
        .collect();
    let Targets::Classes { labels, .. } = d.targets() else {
        unreachable!()
    };
    for (c, v) in root_bars.iter().enumerate() {
        let count = labels.iter().filter(|&&y| y as usize == c).count() as f64;
        assert!(close(*v, count, 1e-4));
    }
    // one dot per transformer on each edge, hollow for identity
    let dots = |class: &str| {
        doc.descendants()
            .filter(|n| n.has_tag_name("circle") && n.attribute("class") == Some(class))
            .count()
    };
    assert_eq!(dots("transformer"), t.transformers());
    assert_eq!(
        dots("identity"),
        t.nodes.iter().filter(|n| n.edge.is_empty()).count()
    );
    assert_eq!(dots("router"), t.routers());
    assert_eq!(dots("solver"), t.leaves().len());
}

#[test]
fn svg_without_data_and_at_many_nodes() {
    let t = full(4);
    let svg = tree_svg(&t, 1600.0, &TreePlot::default());
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(node_groups(&doc).len(), 31);
    let w: f64 = doc
        .root_element()
        .attribute("width")
        .unwrap()
        .parse()
        .unwrap();
    assert!(w > 1600.0);
}

#[test]
fn png_decodes_to_the_requested_width() {
    let m = five_node_model();
    let d = data();
    for width in [900u32, 1600] {
        let bytes = render_tree(&m, Some(&d), Format::Png, width, 10).unwrap();
        let dec = png::Decoder::new(std::io::Cursor::new(bytes));
        let reader = dec.read_info().unwrap();
        let info = reader.info();
        assert_eq!(info.width, width);
        assert!(info.height > 100);
    }
    let svg = String::from_utf8(render_tree(&m, Some(&d), Format::Svg, 700, 10).unwrap()).unwrap();
    let png = raster::svg_to_png(&svg, Some(350)).unwrap();
    let reader = png::Decoder::new(std::io::Cursor::new(png))
        .read_info()
        .unwrap();
    assert_eq!(reader.info().width, 350);
}

#[test]
fn dot_is_structurally_sound() {
    let m = five_node_model();
    let d = data();
    let text =
        String::from_utf8(render_tree(&m, Some(&d), Format::Dot, 1600, 10).unwrap()).unwrap();
    let t = m.topology();
    assert!(text.starts_with("digraph ant {"));
    assert_eq!(text.matches('{').count(), text.matches('}').count());
    // quotes balanced on every line (escaped quotes aside)
    for l in text.lines() {
        assert_eq!(l.replace("\\\"", "").matches('"').count() % 2, 0, "{l}");
    }
    let stmt = |l: &str, i: usize| l.trim_start().starts_with(&format!("n{i} ["));
    for i in 0..t.nodes.len() {
        assert_eq!(text.lines().filter(|l| stmt(l, i)).count(), 1, "node {i}");
        let from = match t.nodes[i].parent {
            Some(p) => format!("n{p}"),
            None => "input".into(),
        };
        let edge = format!("{from} -> n{i} [");
        assert_eq!(
            text.lines()
                .filter(|l| l.trim_start().starts_with(&edge))
                .count(),
            1
        );
    }
    assert_eq!(text.matches(" -> ").count(), t.nodes.len());
    assert!(text.contains("label=\"fc4+tanh\""));
    // without data
    let bare = dot::tree_dot(t, None, None);
    assert!(!bare.contains("reach"));
    assert_eq!(dot::escape("a\"b\nc"), "a\\\"b\\nc");
}

#[test]
fn inspect_has_a_line_per_node_and_the_total() {
    let t = five_nodes();
    let text = inspect::inspect_text(&t);
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("node ")).collect();
    assert_eq!(lines.len(), t.nodes.len(), "{text}");
    assert!(lines[0].starts_with("node 0 "));
    assert!(text.contains("├── node 1 "), "{text}");
    assert!(text.contains("└── node 2 "), "{text}");
    assert!(text.contains("    ├── node 3 "), "{text}");
    // 2->4 (12) + router 4->1 (5), leaf 4->3 (15), router (5), leaf (15), 4->4 (20) + leaf (15)
    assert_eq!(t.num_params(), 12 + 5 + 15 + 5 + 15 + 20 + 15);
    assert!(
        text.contains(&format!(
            "total: 5 nodes, 3 leaves, 2 routers, 2 transformers, depth 2, {} params",
            t.num_params()
        )),
        "{text}"
    );
    for i in 0..t.nodes.len() {
        assert!(text.contains(&format!("{} params", t.node_cost(i).params)));
    }
}

/// An enum from its name in records.jsonl.
fn named<T: serde::de::DeserializeOwned>(name: &str) -> T {
    serde_json::from_value(serde_json::Value::String(name.into())).unwrap()
}

fn rec(phase: &str, node: Option<usize>, cand: Option<&str>, epoch: usize) -> EpochRecord {
    EpochRecord {
        phase: named(phase),
        node,
        candidate: cand.map(named),
        epoch,
        train_loss: 1.0 / (epoch + 1) as f64,
        valid_loss: 1.2 / (epoch + 1) as f64,
        valid_metric: 10.0,
        lr: 1e-3,
        seconds: 0.1,
    }
}

#[test]
fn curve_segments_follow_the_records() {
    let mut r = vec![];
    r.extend((0..3).map(|e| rec("growth", Some(0), Some("root"), e)));
    r.extend((0..2).map(|e| rec("growth", Some(0), Some("split"), e)));
    r.extend((0..2).map(|e| rec("growth", Some(0), Some("deepen"), e)));
    r.extend((0..2).map(|e| rec("growth", Some(0), Some("split"), e)));
    r.extend((0..4).map(|e| rec("refine", None, None, e)));
    let dec = |action: &str, level| Decision {
        node: 0,
        level,
        action: named(action),
        valid_before: 1.0,
        valid_after: 0.5,
        split: Some(0.6),
        deepen: Some(0.5),
        continued: None,
        split_z: None,
        deepen_z: None,
    };
    let s = curves::segments(&r, &[dec("deepen", 0), dec("split", 1)]);
    let got: Vec<(&str, usize, usize, bool)> = s
        .iter()
        .map(|x| (x.label.as_str(), x.start, x.end, x.kept))
        .collect();
    assert_eq!(
        got,
        vec![
            ("n0 root", 0, 3, true),
            ("n0 split (level 0)", 3, 5, false),
            ("n0 deepen (level 0)", 5, 7, true),
            ("n0 split (level 1)", 7, 9, true),
            ("refine", 9, 13, false),
        ]
    );
    let svg = curves::curves_svg(&r, &[], "valid error %", "t", 1000, 560).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let all: Vec<String> = texts(doc.root_element());
    for l in [
        "n0 root *",
        "refine",
        "train loss",
        "valid loss",
        "valid error %",
    ] {
        assert!(all.iter().any(|t| t == l), "{l} missing from {all:?}");
    }
    let (lo, hi) = curves::robust_range(&[1.0, 2.0, 3.0]);
    assert!(lo <= 1.0 && hi >= 3.0);
}

/// Runs of any length draw in shapes a picture holds: 280,000 one-epoch candidates, or
/// a refinement of 280,000 epochs, make an SVG of a few thousand elements that the PNG
/// renderer parses (one shape per segment once made a million and more, beyond its
/// limit); a short run is still drawn segment by segment, each labelled.
#[test]
fn curves_of_any_length_draw_in_shapes_a_picture_holds() {
    let many: Vec<EpochRecord> = (0..280_000)
        .map(|k| rec("growth", Some(k / 2), Some(["split", "deepen"][k % 2]), 1))
        .collect();
    let long: Vec<EpochRecord> = (0..280_000).map(|e| rec("refine", None, None, e)).collect();
    let short: Vec<EpochRecord> = (0..6)
        .map(|k| rec("growth", Some(k / 2), Some(["split", "deepen"][k % 2]), 1))
        .collect();
    for (records, labels) in [(many, None), (long, Some(1)), (short, Some(6))] {
        let svg = curves::curves_svg(&records, &[], "valid MSE", "t", 1600, 900).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let elements = doc.descendants().filter(|n| n.is_element()).count();
        assert!(
            elements < 5_000,
            "{} records: {elements} elements",
            records.len()
        );
        let drawn = texts(doc.root_element());
        if let Some(k) = labels {
            let named = drawn
                .iter()
                .filter(|t| t.starts_with('n') || *t == "refine");
            assert_eq!(named.count(), k, "{drawn:?}");
        }
        let png = raster::svg_to_png(&svg, Some(400)).unwrap();
        assert!(png.starts_with(b"\x89PNG"));
    }
}

#[test]
fn curves_of_a_fitted_run_render() {
    let (m, obs) = fitted();
    let dir = tempfile::tempdir().unwrap();
    m.save(dir.path()).unwrap();
    let lines: Vec<String> = obs
        .epochs
        .iter()
        .map(|r| serde_json::to_string(r).unwrap())
        .collect();
    std::fs::write(dir.path().join("records.jsonl"), lines.join("\n")).unwrap();
    let svg =
        String::from_utf8(render_curves(&[dir.path().to_path_buf()], Format::Svg, 1200).unwrap())
            .unwrap();
    roxmltree::Document::parse(&svg).unwrap();
    assert!(svg.contains("refine"));
    let png = render_curves(&[dir.path().to_path_buf()], Format::Png, 800).unwrap();
    let reader = png::Decoder::new(std::io::Cursor::new(png))
        .read_info()
        .unwrap();
    assert_eq!(reader.info().width, 800);
    assert!(render_curves(&[dir.path().to_path_buf()], Format::Dot, 800).is_err());
    // A run under way or cut there: its records are not the saved model's, whose task
    // and decisions are then not drawn.
    assert!(svg.contains("valid error %"));
    std::fs::create_dir(dir.path().join("checkpoint")).unwrap();
    let cut =
        String::from_utf8(render_curves(&[dir.path().to_path_buf()], Format::Svg, 1200).unwrap())
            .unwrap();
    assert!(!cut.contains("valid error %") && cut.contains("valid metric"));
    std::fs::remove_dir(dir.path().join("checkpoint")).unwrap();
    // the fitted model itself draws too, whatever shape it grew
    let bytes = render_tree(m, Some(&data()), Format::Svg, 1600, 10).unwrap();
    let svg = String::from_utf8(bytes).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(node_groups(&doc).len(), m.topology().nodes.len());
}

#[test]
fn formats_follow_the_flag_or_extension() {
    let p = std::path::Path::new("x/tree.PNG");
    assert_eq!(Format::choose(None, p).unwrap(), Format::Png);
    assert_eq!(Format::choose(Some("dot"), p).unwrap(), Format::Dot);
    assert!(Format::choose(None, std::path::Path::new("tree.jpg")).is_err());
}

#[test]
fn cli_inspect_and_dot_without_data() {
    let m = five_node_model();
    let dir = tempfile::tempdir().unwrap();
    m.save(dir.path()).unwrap();
    let bin = env!("CARGO_BIN_EXE_ant");
    let out = std::process::Command::new(bin)
        .args(["inspect", "--model"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text, inspect::inspect_text(m.topology()));
    let dot_path = dir.path().join("pics/tree.dot");
    let out = std::process::Command::new(bin)
        .args(["plot", "--model"])
        .arg(dir.path())
        .arg("--out")
        .arg(&dot_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dot = std::fs::read_to_string(&dot_path).unwrap();
    assert_eq!(dot, dot::tree_dot(m.topology(), None, None));
    // svg needs data: a clean error, exit code 2
    let out = std::process::Command::new(bin)
        .args(["plot", "--model"])
        .arg(dir.path())
        .args(["--out", "/tmp/never.svg"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--data"));
}
