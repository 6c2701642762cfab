//! A small builder of ONNX graphs over the protobuf types of `onnx-protobuf`: nodes
//! with one output each, named uniquely, and constants as initializers.

use onnx_protobuf::attribute_proto::AttributeType;
use onnx_protobuf::tensor_proto::DataType;
use onnx_protobuf::tensor_shape_proto::{Dimension, dimension};
use onnx_protobuf::type_proto::{Tensor, Value};
use onnx_protobuf::{
    AttributeProto, GraphProto, NodeProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
};

/// The graph under construction.
#[derive(Default)]
pub struct Graph {
    nodes: Vec<NodeProto>,
    initializers: Vec<TensorProto>,
    inputs: Vec<ValueInfoProto>,
    outputs: Vec<ValueInfoProto>,
    names: usize,
}

/// One attribute of a node.
pub enum Attr {
    Int(&'static str, i64),
    Ints(&'static str, Vec<i64>),
}

/// A dimension of a graph input or output: the batch (any size) or a fixed size.
#[derive(Clone, Copy)]
pub enum Dim {
    Batch,
    Fixed(usize),
}

/// The element type of a graph input or output.
#[derive(Clone, Copy)]
pub enum Elem {
    F32,
    I64,
}

impl Graph {
    /// A fresh value name starting with `hint`.
    fn fresh(&mut self, hint: &str) -> String {
        self.names += 1;
        format!("{hint}_{}", self.names)
    }

    /// Node `op` on `inputs`; returns the name of its one output.
    pub fn op(&mut self, op: &str, inputs: &[&str], attrs: Vec<Attr>) -> String {
        let out = self.fresh(&op.to_lowercase());
        self.op_named(op, inputs, attrs, &out);
        out
    }

    /// Node `op` on `inputs` whose one output is called `out` (a graph output).
    pub fn op_named(&mut self, op: &str, inputs: &[&str], attrs: Vec<Attr>, out: &str) {
        self.nodes.push(NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![out.to_string()],
            name: format!("{op}_{}", self.nodes.len()),
            op_type: op.to_string(),
            attribute: attrs.into_iter().map(attribute).collect(),
            ..Default::default()
        });
    }

    /// A float constant of shape `dims`.
    pub fn floats(&mut self, hint: &str, dims: &[usize], values: Vec<f32>) -> String {
        let name = self.fresh(hint);
        self.initializers.push(TensorProto {
            name: name.clone(),
            dims: dims.iter().map(|&d| d as i64).collect(),
            data_type: DataType::FLOAT as i32,
            float_data: values,
            ..Default::default()
        });
        name
    }

    /// An int64 constant vector.
    pub fn ints(&mut self, hint: &str, values: Vec<i64>) -> String {
        let name = self.fresh(hint);
        self.initializers.push(TensorProto {
            name: name.clone(),
            dims: vec![values.len() as i64],
            data_type: DataType::INT64 as i32,
            int64_data: values,
            ..Default::default()
        });
        name
    }

    pub fn input(&mut self, name: &str, elem: Elem, dims: &[Dim]) {
        self.inputs.push(value_info(name, elem, dims));
    }

    pub fn output(&mut self, name: &str, elem: Elem, dims: &[Dim]) {
        self.outputs.push(value_info(name, elem, dims));
    }

    pub fn finish(self, name: &str) -> GraphProto {
        GraphProto {
            name: name.to_string(),
            node: self.nodes,
            initializer: self.initializers,
            input: self.inputs,
            output: self.outputs,
            ..Default::default()
        }
    }
}

fn attribute(a: Attr) -> AttributeProto {
    match a {
        Attr::Int(name, i) => AttributeProto {
            name: name.to_string(),
            type_: AttributeType::INT.into(),
            i,
            ..Default::default()
        },
        Attr::Ints(name, ints) => AttributeProto {
            name: name.to_string(),
            type_: AttributeType::INTS.into(),
            ints,
            ..Default::default()
        },
    }
}

fn value_info(name: &str, elem: Elem, dims: &[Dim]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| Dimension {
            value: Some(match d {
                Dim::Batch => dimension::Value::DimParam("batch".into()),
                Dim::Fixed(n) => dimension::Value::DimValue(*n as i64),
            }),
            ..Default::default()
        })
        .collect();
    let elem_type = match elem {
        Elem::F32 => DataType::FLOAT,
        Elem::I64 => DataType::INT64,
    } as i32;
    let tensor = Tensor {
        elem_type,
        shape: Some(TensorShapeProto {
            dim,
            ..Default::default()
        })
        .into(),
        ..Default::default()
    };
    ValueInfoProto {
        name: name.to_string(),
        type_: Some(TypeProto {
            value: Some(Value::TensorType(tensor)),
            ..Default::default()
        })
        .into(),
        ..Default::default()
    }
}
