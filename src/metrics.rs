//! Model accounting as in the paper's Tables 3, 5 and 6: parameters and FLOPs, for the
//! whole tree (multi-path) and along one root-to-leaf path (single-path).
//!
//! A FLOP here is one floating-point operation: 2 per multiply-add in convolutions and
//! FC layers, 1 per element for activations (ReLU, tanh) and global average pooling, 4
//! per 2x2 max-pool output (3 comparisons + 1 move, rounded as 4). Routers' sigmoids and
//! the mixture's weighting are not counted (a few operations per sample).

use crate::spec::Shape;
use crate::tree::Topology;

/// Parameters and FLOPs per sample of a set of modules.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cost {
    pub params: usize,
    pub flops: u64,
}

impl std::ops::Add for Cost {
    type Output = Cost;
    fn add(self, o: Cost) -> Cost {
        Cost {
            params: self.params + o.params,
            flops: self.flops + o.flops,
        }
    }
}

impl Topology {
    /// Shape entering node `i`'s edge.
    pub fn input_shape_of(&self, i: usize) -> Shape {
        self.nodes[i]
            .parent
            .map_or(self.input, |p| self.shape_at(p))
    }

    /// Cost of node `i`'s own modules: its edge transformers, and its router or solver.
    pub fn node_cost(&self, i: usize) -> Cost {
        let n = &self.nodes[i];
        let mut s = self.input_shape_of(i);
        let mut c = Cost::default();
        for t in &n.edge {
            c = c + Cost {
                params: t.num_params(),
                flops: t.flops(s),
            };
            s = t.out_shape(s).expect("valid topology");
        }
        let m = n.module();
        c + Cost {
            params: m.num_params(),
            flops: m.flops(s),
        }
    }

    /// Every module: what multi-path inference runs per sample.
    pub fn total_cost(&self) -> Cost {
        (0..self.nodes.len())
            .map(|i| self.node_cost(i))
            .fold(Cost::default(), |a, b| a + b)
    }

    /// The modules on the path from the root to `leaf`: what single-path inference runs.
    pub fn path_cost(&self, leaf: usize) -> Cost {
        self.path(leaf)
            .into_iter()
            .map(|i| self.node_cost(i))
            .fold(Cost::default(), |a, b| a + b)
    }
}

#[cfg(test)]
mod tests {
    use crate::spec::{BlockSpec, LayerSpec, Shape};
    use crate::tree::Topology;

    #[test]
    fn path_and_total_costs_add_up() {
        let fc = |i, o| BlockSpec::new(vec![LayerSpec::Linear { d_in: i, d_out: o }]);
        let mut t = Topology::root(
            Shape::Flat { d: 4 },
            vec![BlockSpec::new(vec![
                LayerSpec::Linear { d_in: 4, d_out: 8 },
                LayerSpec::Tanh,
            ])],
            fc(8, 3),
        );
        let [l, r] = t.split(0, fc(8, 1), fc(8, 3), fc(8, 3));
        // root: fc 4->8 (40 params, 64 flops) + tanh (8 flops) + router fc 8->1 (9, 16)
        assert_eq!(t.node_cost(0).params, 40 + 9);
        assert_eq!(t.node_cost(0).flops, 64 + 8 + 16);
        assert_eq!(t.node_cost(l).params, 27);
        assert_eq!(t.path_cost(l).params, 49 + 27);
        assert_eq!(t.total_cost().params, t.num_params());
        assert_eq!(t.total_cost().flops, 88 + 48 + 48);
        assert_eq!(t.path_cost(r).flops, 88 + 48);
    }
}
