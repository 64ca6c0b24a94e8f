//! Command-line values the subcommands share: `K=V` pairs (`--target-env`) and `NAME=URL`
//! pairs (`record --agent`), read by clap with a typed error.

/// A value that is not `KEY=VALUE`.
#[derive(Debug, thiserror::Error)]
#[error("`{given}` is not {shape}")]
pub struct NotAPair {
    given: String,
    shape: &'static str,
}

fn pair(s: &str, shape: &'static str) -> Result<(String, String), NotAPair> {
    s.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| NotAPair {
            given: s.to_owned(),
            shape,
        })
}

/// `K=V` (the value may hold `=`).
pub fn key_value(s: &str) -> Result<(String, String), NotAPair> {
    pair(s, "K=V")
}

/// `NAME=URL`.
pub fn name_url(s: &str) -> Result<(String, String), NotAPair> {
    pair(s, "NAME=URL")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_splits_at_its_first_equals_sign_and_names_the_shape_it_wanted() {
        assert_eq!(
            key_value("A=b=c").ok(),
            Some(("A".to_owned(), "b=c".to_owned()))
        );
        assert_eq!(
            key_value("A").map_err(|e| e.to_string()),
            Err("`A` is not K=V".to_owned())
        );
        assert_eq!(
            name_url("x").map_err(|e| e.to_string()),
            Err("`x` is not NAME=URL".to_owned())
        );
    }
}
