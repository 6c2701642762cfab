//! The transformer: the module on every edge of an ANT, which maps the representation
//! reaching a node to the one its child sees (paper, section 3.1: the edge modules).
//!
//! A preset's transformers (Table 2):
//! - `sarcos`, `tabular`: FC(width) + tanh;
//! - `mnist-*`: conv(k)-n + ReLU, no padding (`mnist-a`: conv5-40, `mnist-b`: conv3-40,
//!   `mnist-c`: conv5-5);
//! - `cifar10-*`: 2 x (conv3-n + ReLU), padded by 1 (n = 128 or 96).
//!
//! Image transformers may end in a 2x2 max pool, as the preset's [`PoolRule`] says for
//! the transformer's position on its path (`pool.rs`). A transformer is not offered when
//! the map would fall below its kernel; `--ablation no-transformer` makes every edge the
//! identity. Built as a [`crate::modules::Block`] like every module.

use crate::pool::{PathPos, PoolRule};
use crate::preset::{Family, Preset};
use crate::spec::{BlockSpec, LayerSpec, Shape};

impl Preset {
    /// The transformer for an edge whose input has shape `input`, at position `pos` on
    /// its root path; `pool` says whether it downsamples. `None` when it cannot apply.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn transformer(
        self,
        input: Shape,
        pos: PathPos,
        pool: PoolRule,
        width: usize,
    ) -> Option<BlockSpec> {
        let spec = match (self.family(width), input) {
            (Family::Fc { width }, Shape::Flat { d }) => BlockSpec::new(vec![
                LayerSpec::Linear {
                    d_in: d,
                    d_out: width,
                },
                LayerSpec::Tanh,
            ]),
            (
                Family::MnistConv {
                    k: ks, trans, freq, ..
                },
                Shape::Image { c, .. },
            ) => {
                let mut l = vec![
                    LayerSpec::Conv {
                        c_in: c,
                        c_out: trans,
                        k: ks,
                        pad: 0,
                    },
                    LayerSpec::Relu,
                ];
                pool.push_pool(&mut l, input, pos, freq)?;
                BlockSpec::new(l)
            }
            (Family::CifarConv { trans, freq, .. }, Shape::Image { c, .. }) => {
                let mut l = vec![
                    LayerSpec::Conv {
                        c_in: c,
                        c_out: trans,
                        k: 3,
                        pad: 1,
                    },
                    LayerSpec::Relu,
                    LayerSpec::Conv {
                        c_in: trans,
                        c_out: trans,
                        k: 3,
                        pad: 1,
                    },
                    LayerSpec::Relu,
                ];
                pool.push_pool(&mut l, input, pos, freq)?;
                BlockSpec::new(l)
            }
            _ => return None,
        };
        // Not offered when the map would be smaller than the kernel.
        spec.out_shape(input).map(|_| spec)
    }
}
