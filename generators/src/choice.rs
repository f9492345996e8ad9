//! Closed sets of named choices (`--key-type words|numbers|uuids`, `"order": "forward"`).
//!
//! A choice is spelled the same way on the command line, in manifests, in recipe files and in
//! row `params`, so one declaration gives the enum its names, parsing, printing and serde form.

/// A name that is not one of a choice's accepted names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected {expected}")]
pub struct ChoiceError {
    /// The name given.
    pub value: String,
    /// The accepted names, in words (`a, b or c`).
    pub expected: String,
}

/// `a`, `a or b`, `a, b or c`: how messages list accepted names.
pub fn one_of(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// Declare a choice enum: `choice! { /// doc  pub enum Spread { /// doc  Random = "random", ... } }`;
/// `Name = "name" | "old_name"` also accepts an alias when parsing (it is written as `name`).
///
/// It derives the usual traits and implements `as_str`, `ALL`, `expected`, `Display`, `FromStr`
/// (error [`ChoiceError`]) and serde as the names, so the enum reads and writes exactly the
/// strings manifests have always held.
macro_rules! choice {
    ($(#[$meta:meta])* pub enum $name:ident {
        $($(#[$vmeta:meta])* $variant:ident = $text:literal $(| $alias:literal)*),+ $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every choice, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The name manifests, `params` and command lines use.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The accepted names, for messages (`a, b or c`).
            pub fn expected() -> String {
                $crate::choice::one_of(&[$($text),+])
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::choice::ChoiceError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text $(| $alias)* => Ok($name::$variant),)+
                    _ => Err($crate::choice::ChoiceError {
                        value: s.to_string(),
                        expected: Self::expected(),
                    }),
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
                s.parse().map_err(|e: $crate::choice::ChoiceError| {
                    serde::de::Error::custom(format!("invalid value '{}': {e}", e.value))
                })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    choice! {
        /// A test choice.
        pub enum Fruit {
            /// Red.
            Apple = "apple",
            /// Two words, with an alias.
            BloodOrange = "blood-orange" | "blood_orange",
        }
    }

    #[test]
    fn names_round_trip_through_parse_display_and_serde() {
        for f in Fruit::ALL {
            assert_eq!(f.as_str().parse::<Fruit>(), Ok(*f));
            let json = serde_json::to_string(f).unwrap();
            assert_eq!(json, format!("\"{f}\""));
            assert_eq!(serde_json::from_str::<Fruit>(&json).unwrap(), *f);
        }
        assert_eq!("blood_orange".parse::<Fruit>(), Ok(Fruit::BloodOrange));
        let e = "pear".parse::<Fruit>().unwrap_err();
        assert_eq!(e.to_string(), "expected apple or blood-orange");
        assert!(serde_json::from_str::<Fruit>("\"pear\"").is_err());
    }

    #[test]
    fn accepted_names_read_as_a_list() {
        assert_eq!(super::one_of(&["a"]), "a");
        assert_eq!(super::one_of(&["a", "b"]), "a or b");
        assert_eq!(super::one_of(&["a", "b", "c"]), "a, b or c");
    }
}
