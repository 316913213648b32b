//! Column changes of Oracle DDL, pure: what `ALTER TABLE ... ADD` / `DROP` does to a table's
//! columns, and the pieces of column definitions. Shared by the simulator (which applies DDL to
//! its dictionary) and the schema history (which derives a DDL's structure from the one before
//! it when the catalog is already past later DDL).
//!
//! Understood: `ADD (c type [DEFAULT ..] [NOT NULL], ...)` / `ADD c type`, `DROP COLUMN c` /
//! `DROP (c, ...)`, `RENAME COLUMN a TO b`, `MODIFY (c [type] [NOT NULL | NULL], ...)` /
//! `MODIFY c ...`. Anything else changes no column (`Ok(None)`), a table rename included.
//!
//! Segment column numbers ([`Column::segment_column`], what LogMiner's `"COL n"` names), when
//! every column has one: an added column takes the next number after the highest; a DROP
//! removes the column's data from every row and numbers the remaining columns again from 1 in
//! their stored order (a DROP also removes SET UNUSED columns, so no gap is left). Oracle's
//! definitions are in the Database Reference (`ALL_TAB_COLS.SEGMENT_COLUMN_ID`); the
//! renumbering is what `SYS.COL$.SEGCOL#` shows in field reports (laoxiong.net,
//! "col$ col#, segcol#, intcol#": after SET UNUSED the column keeps its SEGCOL#, an ADD takes
//! the highest + 1, a DROP renumbers every column). One limit: a SET UNUSED column is hidden and
//! not user-generated, so it is not in the capture's columns, and a column added after it gets
//! a number one too low.

use super::{Column, OracleType};

/// The columns after `statement` (an `ALTER TABLE`), or `None` when it adds or drops no column.
/// A statement Oracle would refuse (an existing or unknown column, all columns dropped, a type
/// that does not parse) is an error with the reason.
pub fn alter_columns(statement: &str, columns: &[Column]) -> Result<Option<Vec<Column>>, String> {
    let statement = statement.trim_end().trim_end_matches(';');
    let upper = statement.to_ascii_uppercase();
    let mut columns = columns.to_vec();
    if let Some(at) = keyword(&upper, "RENAME") {
        return rename_column(&statement[at + "RENAME".len()..], columns);
    }
    if let Some(at) = keyword(&upper, "MODIFY") {
        return modify_columns(&statement[at + "MODIFY".len()..], columns);
    }
    if let Some(at) = keyword(&upper, "ADD") {
        let rest = statement[at + 3..].trim();
        let definitions = match rest.strip_prefix('(') {
            Some(_) => split_top_level(paren_body(rest).ok_or("unbalanced parentheses")?),
            None => vec![rest],
        };
        for definition in definitions {
            let (column, _) = column_definition(definition)?;
            if columns.iter().any(|c| c.name == column.name) {
                return Err(format!("column {} exists (ORA-01430)", column.name));
            }
            let next = next_segment_column(&columns);
            columns.push(match next {
                Some(number) => column.segment(number),
                None => column,
            });
        }
        return Ok(Some(columns));
    }
    if let Some(at) = keyword(&upper, "DROP") {
        let rest = statement[at + 4..].trim();
        let names: Vec<String> = match rest.strip_prefix('(') {
            Some(_) => split_top_level(paren_body(rest).ok_or("unbalanced parentheses")?)
                .into_iter()
                .map(identifier)
                .collect(),
            None => {
                let rest = rest
                    .strip_prefix("COLUMN")
                    .or_else(|| rest.strip_prefix("column"))
                    .unwrap_or(rest);
                vec![identifier(
                    rest.split_whitespace().next().unwrap_or_default(),
                )]
            }
        };
        for name in &names {
            let Some(index) = columns.iter().position(|c| c.name == *name) else {
                return Err(format!("no column {name} (ORA-00904)"));
            };
            columns.remove(index);
        }
        if columns.is_empty() {
            return Err("cannot drop all columns (ORA-12983)".to_owned());
        }
        renumber_segment_columns(&mut columns);
        return Ok(Some(columns));
    }
    Ok(None)
}

/// The old and new name of `ALTER TABLE ... RENAME COLUMN a TO b`; `None` for any other
/// statement.
pub fn renamed_column(statement: &str) -> Option<(String, String)> {
    let statement = statement.trim_end().trim_end_matches(';');
    let at = keyword(&statement.to_ascii_uppercase(), "RENAME")?;
    column_rename(&statement[at + "RENAME".len()..])
        .ok()
        .flatten()
}

/// `COLUMN a TO b` (after `RENAME`): the names; `None` for `RENAME TO`, `RENAME CONSTRAINT`, ...
fn column_rename(rest: &str) -> Result<Option<(String, String)>, String> {
    let rest = rest.trim_start();
    if keyword(&rest.to_ascii_uppercase(), "COLUMN") != Some(0) {
        return Ok(None);
    }
    let rest = &rest["COLUMN".len()..];
    let to = keyword(&rest.to_ascii_uppercase(), "TO").ok_or("RENAME COLUMN without TO")?;
    Ok(Some((identifier(&rest[..to]), identifier(&rest[to + 2..]))))
}

/// `RENAME COLUMN a TO b` (after `RENAME`): the column keeps its type, key and segment column
/// number. `RENAME TO`, `RENAME CONSTRAINT`, ... change no column.
fn rename_column(rest: &str, mut columns: Vec<Column>) -> Result<Option<Vec<Column>>, String> {
    let Some((old, new)) = column_rename(rest)? else {
        return Ok(None);
    };
    if columns.iter().any(|c| c.name == new) {
        return Err(format!("column {new} exists (ORA-00957)"));
    }
    let column = columns
        .iter_mut()
        .find(|c| c.name == old)
        .ok_or_else(|| format!("no column {old} (ORA-00904)"))?;
    column.name = new;
    Ok(Some(columns))
}

/// `MODIFY (c [type] [NOT NULL | NULL], ...)` / `MODIFY c ...` (after `MODIFY`): a new type
/// and nullability; a definition without a type (`c NOT NULL`) keeps the type. The column keeps
/// its place, key and segment column number.
fn modify_columns(rest: &str, mut columns: Vec<Column>) -> Result<Option<Vec<Column>>, String> {
    let rest = rest.trim();
    let definitions = match rest.strip_prefix('(') {
        Some(_) => split_top_level(paren_body(rest).ok_or("unbalanced parentheses")?),
        None => vec![rest],
    };
    for definition in definitions {
        let name = identifier(definition.split_whitespace().next().unwrap_or_default());
        let column = columns
            .iter_mut()
            .find(|c| c.name == name)
            .ok_or_else(|| format!("no column {name} (ORA-00904)"))?;
        let upper = definition.trim().to_ascii_uppercase();
        let after_name =
            upper[upper.find(char::is_whitespace).unwrap_or(upper.len())..].trim_start();
        let constraint_only = ["NOT NULL", "NULL", "DEFAULT", "CONSTRAINT"]
            .iter()
            .any(|word| after_name.starts_with(word));
        if !constraint_only {
            let (modified, _) = column_definition(definition)?;
            column.data_type = modified.data_type;
        }
        if keyword(&upper, "NOT NULL").is_some() {
            column.nullable = false;
        } else if keyword(&upper, "NULL").is_some() && column.key_position.is_none() {
            column.nullable = true;
        }
    }
    Ok(Some(columns))
}

/// The number an added column takes: after the highest; `None` unless every column has one.
fn next_segment_column(columns: &[Column]) -> Option<u16> {
    let numbers: Option<Vec<u16>> = columns.iter().map(|c| c.segment_column).collect();
    numbers?.into_iter().max()?.checked_add(1)
}

/// After a DROP: the remaining columns numbered 1.. in their stored order, when all have one.
fn renumber_segment_columns(columns: &mut [Column]) {
    let Some(mut numbers) = columns
        .iter()
        .map(|c| c.segment_column)
        .collect::<Option<Vec<u16>>>()
    else {
        return;
    };
    numbers.sort_unstable();
    for column in columns.iter_mut() {
        if let Some(old) = column.segment_column {
            let rank = numbers.partition_point(|n| *n < old);
            column.segment_column = u16::try_from(rank + 1).ok();
        }
    }
}

/// `name type [constraints]`; whether it says PRIMARY KEY.
pub fn column_definition(text: &str) -> Result<(Column, bool), String> {
    let text = text.trim();
    let (name, rest) = match text.strip_prefix('"') {
        Some(quoted) => {
            let end = quoted.find('"').ok_or("unterminated quoted name")?;
            (quoted[..end].to_owned(), &quoted[end + 1..])
        }
        None => {
            let end = text
                .find(char::is_whitespace)
                .ok_or_else(|| format!("{text:?} has no type"))?;
            (text[..end].to_ascii_uppercase(), &text[end..])
        }
    };
    let upper = rest.to_ascii_uppercase();
    let type_end = [
        "DEFAULT",
        "NOT NULL",
        "NULL",
        "PRIMARY KEY",
        "CONSTRAINT",
        "UNIQUE",
        "CHECK",
        "REFERENCES",
    ]
    .iter()
    .filter_map(|word| keyword(&upper, word))
    .min()
    .unwrap_or(rest.len());
    let data_type = OracleType::parse(rest[..type_end].trim()).map_err(|e| e.to_string())?;
    let primary = upper.contains("PRIMARY KEY");
    let column = Column::new(name, data_type).nullable(!upper.contains("NOT NULL") && !primary);
    Ok((column, primary))
}

/// The byte offset of `word` as a whole word in upper-case `text`.
fn keyword(text: &str, word: &str) -> Option<usize> {
    text.match_indices(word).map(|(at, _)| at).find(|&at| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '"')
            && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '"')
    })
}

/// The text inside the parentheses `text` starts with.
pub fn paren_body(text: &str) -> Option<&str> {
    let mut depth = 0;
    for (at, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return text.get(1..at);
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits on commas outside parentheses.
pub fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (at, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(text[start..at].trim());
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(text[start..].trim());
    parts.retain(|p| !p.is_empty());
    parts
}

/// A bare name folded to upper case, or a quoted name as written.
pub fn identifier(text: &str) -> String {
    let text = text.trim();
    match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(quoted) => quoted.to_owned(),
        None => text.to_ascii_uppercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(columns: &[Column]) -> Vec<&str> {
        columns.iter().map(|c| c.name.as_str()).collect()
    }

    fn base() -> Vec<Column> {
        vec![
            Column::new("ID", OracleType::parse("NUMBER(10)").unwrap()).key(1),
            Column::new("NOTE", OracleType::parse("VARCHAR2(20)").unwrap()),
        ]
    }

    #[test]
    fn rename_and_modify_keep_the_column_in_place() {
        let renamed = alter_columns("ALTER TABLE T RENAME COLUMN NOTE TO REMARK;", &base())
            .unwrap()
            .unwrap();
        assert_eq!(names(&renamed), ["ID", "REMARK"]);
        assert_eq!(renamed[1].data_type, base()[1].data_type);
        let modified = alter_columns("alter table t modify (note varchar2(40) not null)", &base())
            .unwrap()
            .unwrap();
        assert_eq!(
            modified[1].data_type,
            OracleType::parse("VARCHAR2(40)").unwrap()
        );
        assert!(!modified[1].nullable);
        let relaxed = alter_columns("ALTER TABLE T MODIFY NOTE NULL", &modified)
            .unwrap()
            .unwrap();
        assert_eq!(relaxed[1].data_type, modified[1].data_type);
        assert!(relaxed[1].nullable);
        // A table rename or a constraint rename changes no column.
        assert_eq!(
            alter_columns("ALTER TABLE T RENAME TO U", &base()),
            Ok(None)
        );
        assert_eq!(
            alter_columns("ALTER TABLE T RENAME CONSTRAINT A TO B", &base()),
            Ok(None)
        );
        assert!(alter_columns("ALTER TABLE T RENAME COLUMN NOPE TO X", &base()).is_err());
        assert!(alter_columns("ALTER TABLE T RENAME COLUMN NOTE TO ID", &base()).is_err());
        assert!(alter_columns("ALTER TABLE T MODIFY (NOPE NUMBER)", &base()).is_err());
    }

    #[test]
    fn segment_column_numbers_follow_oracles_add_and_drop() {
        // A clustered table's key column is stored first: numbers are not positions.
        let numbered = vec![
            Column::new("A", OracleType::parse("NUMBER").unwrap()).segment(2),
            Column::new("B", OracleType::parse("NUMBER").unwrap()).segment(1),
            Column::new("C", OracleType::parse("NUMBER").unwrap()).segment(3),
        ];
        let numbers = |columns: &[Column]| -> Vec<(String, Option<u16>)> {
            columns
                .iter()
                .map(|c| (c.name.clone(), c.segment_column))
                .collect()
        };
        let added = alter_columns("ALTER TABLE T ADD (D NUMBER, E DATE)", &numbered)
            .unwrap()
            .unwrap();
        assert_eq!(added[3].segment_column, Some(4));
        assert_eq!(added[4].segment_column, Some(5));
        let dropped = alter_columns("ALTER TABLE T DROP (A)", &added)
            .unwrap()
            .unwrap();
        assert_eq!(
            numbers(&dropped),
            [
                ("B".to_owned(), Some(1)),
                ("C".to_owned(), Some(2)),
                ("D".to_owned(), Some(3)),
                ("E".to_owned(), Some(4)),
            ]
        );
        // Without numbers (a history record from before they were read) none is made up.
        let added = alter_columns("ALTER TABLE T ADD X DATE", &base())
            .unwrap()
            .unwrap();
        assert_eq!(added[2].segment_column, None);
    }

    #[test]
    fn adds_and_drops_change_the_columns() {
        let added = alter_columns(
            "alter table app.t add (p number(1) default 0 not null, \"Mixed\" varchar2(5 char))",
            &base(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(names(&added), ["ID", "NOTE", "P", "Mixed"]);
        assert!(!added[2].nullable);
        assert_eq!(
            added[3].data_type,
            OracleType::parse("VARCHAR2(5 CHAR)").unwrap()
        );
        let single = alter_columns("ALTER TABLE T ADD X DATE", &base())
            .unwrap()
            .unwrap();
        assert_eq!(names(&single), ["ID", "NOTE", "X"]);
        let dropped = alter_columns("ALTER TABLE T DROP COLUMN note", &base())
            .unwrap()
            .unwrap();
        assert_eq!(names(&dropped), ["ID"]);
        assert_eq!(dropped[0].key_position, Some(1), "the key is kept");
        let listed = alter_columns("ALTER TABLE T DROP (NOTE)", &base())
            .unwrap()
            .unwrap();
        assert_eq!(names(&listed), ["ID"]);
    }

    #[test]
    fn other_statements_change_no_column_or_are_refused() {
        assert_eq!(
            alter_columns("ALTER TABLE T RENAME TO U", &base()),
            Ok(None)
        );
        for refused in [
            "ALTER TABLE T ADD (NOTE NUMBER)",
            "ALTER TABLE T DROP COLUMN NOPE",
            "ALTER TABLE T DROP (ID, NOTE)",
            "ALTER TABLE T ADD CONSTRAINT U UNIQUE (NOTE)",
        ] {
            assert!(alter_columns(refused, &base()).is_err(), "{refused}");
        }
    }
}
