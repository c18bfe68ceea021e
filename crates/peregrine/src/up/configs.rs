//! A config file of the run, edited as TOML values rather than as text: `up` parses a
//! template, sets each value a run decides at its key, and writes the result. A
//! template that is not valid TOML, or where a run's value would land inside
//! something that is not a table, is refused with the file and key named; the
//! caller then checks the result with the config parser of the process that reads
//! it, before anything starts.

use anyhow::Context;
use toml::{Table, Value};

/// One config file being filled in.
#[derive(Debug, Clone)]
pub(super) struct Doc {
    /// The file's name, for messages.
    file: &'static str,
    root: Table,
}

impl Doc {
    /// `text` (the template of `file`) parsed.
    pub(super) fn parse(file: &'static str, text: &str) -> anyhow::Result<Doc> {
        let root = text.parse::<Table>().with_context(|| {
            format!(
                "{file} is not valid TOML (templates written by an older `peregrine up` \
                 held @...@ placeholders: write them again with `peregrine up --write-config DIR`)"
            )
        })?;
        Ok(Doc { file, root })
    }

    /// Sets the value at `path` (dot-separated keys; missing tables are made).
    pub(super) fn set(&mut self, path: &str, value: impl Into<Value>) -> anyhow::Result<()> {
        set_in(&mut self.root, self.file, path, value.into())
    }

    /// The array of tables at top-level `key` (made empty when missing).
    pub(super) fn tables_mut(&mut self, key: &str) -> anyhow::Result<&mut Vec<Value>> {
        let file = self.file;
        self.root
            .entry(key)
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .with_context(|| format!("{file}: `{key}` is not an array of tables"))
    }

    /// The entry of the array of tables `key` whose `field` is the string `name`.
    pub(super) fn entry_mut(
        &mut self,
        key: &str,
        field: &str,
        name: &str,
    ) -> anyhow::Result<Entry<'_>> {
        let file = self.file;
        let table = self
            .tables_mut(key)?
            .iter_mut()
            .filter_map(Value::as_table_mut)
            .find(|t| t.get(field).and_then(Value::as_str) == Some(name))
            .with_context(|| format!("{file}: no `{key}` entry with {field} = {name:?}"))?;
        Ok(Entry { file, table })
    }

    /// The parsed document.
    pub(super) fn into_table(self) -> Table {
        self.root
    }

    /// The file's text, with a first line saying where it came from.
    pub(super) fn text(&self) -> anyhow::Result<String> {
        let body = toml::to_string(&self.root)
            .with_context(|| format!("writing {} as TOML", self.file))?;
        Ok(format!(
            "# Written by `peregrine up` for this run from its {} template.\n\n{body}",
            self.file
        ))
    }
}

/// One table inside an array of tables of a [`Doc`].
pub(super) struct Entry<'a> {
    file: &'static str,
    table: &'a mut Table,
}

impl Entry<'_> {
    /// Sets the value at `path` inside the entry (as [`Doc::set`]).
    pub(super) fn set(&mut self, path: &str, value: impl Into<Value>) -> anyhow::Result<()> {
        set_in(self.table, self.file, path, value.into())
    }
}

fn set_in(root: &mut Table, file: &str, path: &str, value: Value) -> anyhow::Result<()> {
    let mut keys = path.split('.');
    let last = keys.next_back().context("an empty key")?;
    let mut table = root;
    for key in keys {
        table = table
            .entry(key)
            .or_insert_with(|| Value::Table(Table::new()))
            .as_table_mut()
            .with_context(|| format!("{file}: `{key}` (in `{path}`) is not a table"))?;
    }
    table.insert(last.to_owned(), value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_land_at_their_keys_and_tables_are_made() {
        let mut d = Doc::parse("x.toml", "a = 1\n[t]\nb = \"s\"\n[[v]]\nname = \"n\"\n").unwrap();
        d.set("a", 2).unwrap();
        d.set("t.c.d", "deep").unwrap();
        d.entry_mut("v", "name", "n")
            .unwrap()
            .set("in.x", true)
            .unwrap();
        let back: Table = d.text().unwrap().parse().unwrap();
        assert_eq!(back["a"].as_integer(), Some(2));
        assert_eq!(back["t"]["b"].as_str(), Some("s"));
        assert_eq!(back["t"]["c"]["d"].as_str(), Some("deep"));
        assert_eq!(back["v"][0]["in"]["x"].as_bool(), Some(true));
    }

    #[test]
    fn bad_templates_and_keys_are_refused_by_name() {
        let err = format!("{:#}", Doc::parse("e.toml", "@ACCOUNTS@\n").unwrap_err());
        assert!(
            err.contains("e.toml") && err.contains("--write-config"),
            "{err}"
        );
        let mut d = Doc::parse("e.toml", "a = 1\n").unwrap();
        let err = format!("{:#}", d.set("a.b", 1).unwrap_err());
        assert!(err.contains("e.toml") && err.contains("`a`"), "{err}");
        let err = format!("{:#}", d.entry_mut("v", "name", "px").err().unwrap());
        assert!(err.contains("name = \"px\""), "{err}");
        let err = format!("{:#}", d.tables_mut("a").unwrap_err());
        assert!(err.contains("not an array"), "{err}");
    }
}
