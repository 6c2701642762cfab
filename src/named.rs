//! Enums a user picks by name (on a command line, in a file): one list of names each,
//! the same as their JSON names, so front ends need no copy of them.

/// An enum with a fixed set of named values.
pub trait Named: Sized + Copy + 'static {
    /// Every value, in the order a user would list them.
    const ALL: &'static [Self];

    /// The value's name (kebab-case).
    fn name(self) -> &'static str;

    /// The value called `name`.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.name() == name)
    }

    /// Every name, for help texts and error messages.
    fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|v| v.name()).collect()
    }
}

/// `named!(Type { Variant => "name", ... })`: [`Named`] and `Display` by name.
macro_rules! named {
    ($t:ty { $($v:ident => $n:literal),* $(,)? }) => {
        impl $crate::named::Named for $t {
            const ALL: &'static [Self] = &[$(Self::$v),*];
            fn name(self) -> &'static str {
                match self {
                    $(Self::$v => $n),*
                }
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($crate::named::Named::name(*self))
            }
        }

        /// The names on the command line (`--help` lists them).
        #[cfg(feature = "cli")]
        impl clap::ValueEnum for $t {
            fn value_variants<'a>() -> &'a [Self] {
                <Self as $crate::named::Named>::ALL
            }
            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(clap::builder::PossibleValue::new($crate::named::Named::name(*self)))
            }
        }
    };
}
pub(crate) use named;

/// `named_by_string!(Type)`: a value named by a string with a parameter (`mlp-3`,
/// `authors-1`, `z:1`) is that string in files: with `#[serde(into = "String",
/// try_from = "String")]`, its `Display` and `FromStr` (whose error is the message).
macro_rules! named_by_string {
    ($t:ty) => {
        impl From<$t> for String {
            fn from(v: $t) -> String {
                v.to_string()
            }
        }

        impl TryFrom<String> for $t {
            type Error = String;
            fn try_from(s: String) -> Result<Self, String> {
                s.parse()
            }
        }
    };
}
pub(crate) use named_by_string;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choices::{Augment, Init, RouterInit};
    use crate::preset::{Ablation, Preset};

    /// The names are the JSON names, so files and command lines agree.
    fn names_match_json<T: Named + serde::Serialize>() {
        for v in T::ALL {
            let json = serde_json::to_value(v).unwrap();
            assert_eq!(json.as_str(), Some(v.name()));
            assert_eq!(T::from_name(v.name()).map(|w| w.name()), Some(v.name()));
        }
    }

    #[test]
    fn every_name_is_its_json_name() {
        names_match_json::<Preset>();
        names_match_json::<Ablation>();
        names_match_json::<Init>();
        names_match_json::<RouterInit>();
        names_match_json::<Augment>();
        assert_eq!(Preset::from_name("mnist-c"), Some(Preset::MnistC));
        assert_eq!(Preset::from_name("mnist_c"), None);
    }
}
