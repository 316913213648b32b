//! Parses one statement the client sends. SQL goes to `sqlparser`'s Oracle dialect; three parts
//! of Oracle's grammar it lacks are read here from its tokens, by grammar, not by text:
//! - `table AS OF SCN expr` (flashback query, SQL Language Reference, SELECT, flashback_query_clause),
//!   taken out of the token stream and kept as the statement's SCN;
//! - an anonymous PL/SQL block that calls one procedure with named arguments
//!   (`BEGIN SYS.DBMS_LOGMNR.ADD_LOGFILE(LOGFILENAME => :1, OPTIONS => SYS.DBMS_LOGMNR.NEW); END;`);
//! - `ALTER SESSION SET parameter = value`.
//!
//! A limit of Oracle's grammar the parser does not know is enforced here too: an IN list of more
//! than 1000 expressions is ORA-01795 ([`in_list_limit`]).

use sqlparser::ast::{Expr, Query};
use sqlparser::dialect::OracleDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer, Word};

use super::OraError;

/// A parsed statement.
#[derive(Debug)]
pub enum Statement {
    /// A query; `as_of_scn` is the `AS OF SCN` expression of its table, when it has one.
    Query {
        query: Box<Query>,
        as_of_scn: Option<Box<Expr>>,
    },
    /// DML or DDL: UPDATE, INSERT, DELETE, CREATE TABLE.
    Sql(Box<sqlparser::ast::Statement>),
    /// `BEGIN procedure(name => value, ...); END;`.
    Call {
        procedure: String,
        args: Vec<(String, Argument)>,
    },
    /// `ALTER SESSION SET parameter = value`.
    AlterSession { parameter: String, value: String },
}

/// A procedure argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Argument {
    /// A bind variable (`:1`).
    Bind(String),
    Number(String),
    Text(String),
    /// A package constant (`SYS.DBMS_LOGMNR.NEW`), upper case and dotted.
    Constant(String),
}

/// The statement's tokens without white space; a bind variable (`:1`, `:name`), which the
/// tokenizer gives as a colon and what follows it, is one placeholder token.
fn tokens(sql: &str) -> Result<Vec<Token>, OraError> {
    let raw = Tokenizer::new(&OracleDialect {}, sql)
        .tokenize()
        .map_err(|error| OraError::new(911, &format!("invalid character: {error}")))?;
    let mut tokens = Vec::with_capacity(raw.len());
    let mut raw = raw.into_iter().peekable();
    while let Some(token) = raw.next() {
        match token {
            Token::Whitespace(_) => {}
            Token::Colon => match raw.peek() {
                Some(Token::Number(number, _)) => {
                    tokens.push(Token::Placeholder(format!(":{number}")));
                    raw.next();
                }
                Some(Token::Word(word)) if word.quote_style.is_none() => {
                    tokens.push(Token::Placeholder(format!(":{}", word.value)));
                    raw.next();
                }
                _ => tokens.push(Token::Colon),
            },
            other => tokens.push(other),
        }
    }
    Ok(tokens)
}

/// ORA-01795 for an IN list of more than 1000 expressions. "A comma-delimited list of
/// expressions can contain no more than 1000 expressions. A comma-delimited list of sets of
/// expressions can contain any number of sets, but each set can contain no more than 1000
/// expressions" (SQL Language Reference, Expression Lists). Oracle refuses it when parsing, rows
/// or not, so it is checked on the tokens: the list after `IN (`, or each set of a list of sets
/// (`IN ((a, b), (c, d))`); a subquery (`IN (SELECT ...`) is not an expression list.
fn in_list_limit(tokens: &[Token]) -> Result<(), OraError> {
    const MAX_EXPRESSIONS: usize = 1000;
    #[derive(PartialEq)]
    enum Group {
        /// An expression list: at most 1000 expressions.
        List,
        /// A list of sets: any number of them, each a [`Group::List`].
        Sets,
        Other,
    }
    // Per open parenthesis: what it holds and its commas at its own depth.
    let mut open: Vec<(Group, usize)> = Vec::new();
    for (at, token) in tokens.iter().enumerate() {
        match token {
            Token::LParen => {
                let next = tokens.get(at + 1);
                let after_in = at > 0 && is_keyword(tokens.get(at - 1), "IN");
                let subquery = is_keyword(next, "SELECT") || is_keyword(next, "WITH");
                let in_sets = open.last().is_some_and(|(group, _)| *group == Group::Sets);
                let group = if after_in && matches!(next, Some(Token::LParen)) {
                    Group::Sets
                } else if (after_in && !subquery) || in_sets {
                    Group::List
                } else {
                    Group::Other
                };
                open.push((group, 0));
            }
            Token::RParen => {
                open.pop();
            }
            Token::Comma => {
                if let Some((Group::List, commas)) = open.last_mut() {
                    *commas += 1;
                    if *commas >= MAX_EXPRESSIONS {
                        return Err(OraError::new(
                            1795,
                            "maximum number of expressions in a list is 1000",
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn word(token: Option<&Token>) -> Option<&Word> {
    match token {
        Some(Token::Word(word)) => Some(word),
        _ => None,
    }
}

fn is_keyword(token: Option<&Token>, text: &str) -> bool {
    word(token).is_some_and(|w| w.quote_style.is_none() && w.value.eq_ignore_ascii_case(text))
}

/// The bind variables of a statement in the order they first appear: OCI binds by position in
/// that order (Oracle Call Interface Programmer's Guide, "Binding by position").
pub fn placeholders(sql: &str) -> Result<Vec<String>, OraError> {
    let mut names: Vec<String> = Vec::new();
    for token in tokens(sql)? {
        if let Token::Placeholder(name) = token
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    Ok(names)
}

pub fn parse(sql: &str) -> Result<Statement, OraError> {
    let mut tokens = tokens(sql)?;
    in_list_limit(&tokens)?;
    if is_keyword(tokens.first(), "BEGIN") {
        return call(&tokens);
    }
    if is_keyword(tokens.first(), "ALTER") && is_keyword(tokens.get(1), "SESSION") {
        return alter_session(&tokens);
    }
    // `AS OF SCN expr`: the SCN expression is one token (a bind or a number).
    let mut as_of_scn = None;
    if let Some(at) = (0..tokens.len()).find(|&at| {
        is_keyword(tokens.get(at), "AS")
            && is_keyword(tokens.get(at + 1), "OF")
            && is_keyword(tokens.get(at + 2), "SCN")
    }) {
        let scn = match tokens.get(at + 3) {
            Some(Token::Placeholder(name)) => {
                Expr::value(sqlparser::ast::Value::Placeholder(name.clone()))
            }
            Some(Token::Number(number, long)) => {
                Expr::value(sqlparser::ast::Value::Number(number.clone(), *long))
            }
            _ => return Err(OraError::new(936, "missing expression")),
        };
        as_of_scn = Some(Box::new(scn));
        tokens.drain(at..at + 4);
    }
    let mut statements = Parser::new(&OracleDialect {})
        .with_tokens(tokens)
        .parse_statements()
        .map_err(|error| OraError::new(900, &format!("invalid SQL statement: {error}")))?;
    if statements.len() != 1 {
        return Err(OraError::new(933, "SQL command not properly ended"));
    }
    let statement = statements.remove(0);
    match statement {
        sqlparser::ast::Statement::Query(query) => Ok(Statement::Query { query, as_of_scn }),
        _ if as_of_scn.is_some() => Err(OraError::invalid_sql("AS OF outside a query")),
        other => Ok(Statement::Sql(Box::new(other))),
    }
}

/// `BEGIN name[(arg => value, ...)]; END;`
fn call(tokens: &[Token]) -> Result<Statement, OraError> {
    let expected = |what: &str| OraError::new(6550, &format!("PLS-00103: expected {what}"));
    let mut at = 1;
    let dotted = |at: &mut usize| -> Option<String> {
        let mut parts = Vec::new();
        loop {
            parts.push(word(tokens.get(*at))?.value.to_uppercase());
            *at += 1;
            if tokens.get(*at) != Some(&Token::Period) {
                return Some(parts.join("."));
            }
            *at += 1;
        }
    };
    let procedure = dotted(&mut at).ok_or_else(|| expected("a procedure name"))?;
    let mut args = Vec::new();
    if tokens.get(at) == Some(&Token::LParen) {
        at += 1;
        loop {
            let name = word(tokens.get(at))
                .map(|w| w.value.to_uppercase())
                .ok_or_else(|| expected("an argument name (the model takes named arguments)"))?;
            at += 1;
            if tokens.get(at) != Some(&Token::RArrow) {
                return Err(expected("=>"));
            }
            at += 1;
            let value = match tokens.get(at) {
                Some(Token::Placeholder(name)) => {
                    at += 1;
                    Argument::Bind(name.clone())
                }
                Some(Token::Number(number, _)) => {
                    at += 1;
                    Argument::Number(number.clone())
                }
                Some(Token::SingleQuotedString(text)) => {
                    at += 1;
                    Argument::Text(text.clone())
                }
                Some(Token::Word(_)) => {
                    Argument::Constant(dotted(&mut at).ok_or_else(|| expected("a value"))?)
                }
                _ => return Err(expected("a value")),
            };
            args.push((name, value));
            match tokens.get(at) {
                Some(Token::Comma) => at += 1,
                Some(Token::RParen) => {
                    at += 1;
                    break;
                }
                _ => return Err(expected(", or )")),
            }
        }
    }
    let rest = &tokens[at..];
    let ends =
        matches!(rest, [Token::SemiColon, end, Token::SemiColon] if is_keyword(Some(end), "END"));
    if !ends {
        return Err(expected("; END;"));
    }
    Ok(Statement::Call { procedure, args })
}

/// `ALTER SESSION SET parameter = value`.
fn alter_session(tokens: &[Token]) -> Result<Statement, OraError> {
    let invalid = || OraError::new(922, "missing or invalid option");
    if !is_keyword(tokens.get(2), "SET") || tokens.get(4) != Some(&Token::Eq) || tokens.len() != 6 {
        return Err(invalid());
    }
    let parameter = word(tokens.get(3)).ok_or_else(invalid)?;
    if parameter.keyword != Keyword::NoKeyword && parameter.quote_style.is_some() {
        return Err(invalid());
    }
    let value = match tokens.get(5) {
        Some(Token::SingleQuotedString(text)) => text.clone(),
        Some(Token::Word(word)) if word.quote_style.is_some() => word.value.clone(),
        Some(Token::Word(word)) => word.value.to_uppercase(),
        Some(Token::Number(number, _)) => number.clone(),
        _ => return Err(invalid()),
    };
    Ok(Statement::AlterSession {
        parameter: parameter.value.to_uppercase(),
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logminer_calls_and_session_settings_are_read_by_grammar() {
        let Statement::Call { procedure, args } = parse(
            "BEGIN SYS.DBMS_LOGMNR.ADD_LOGFILE(LOGFILENAME => :1, OPTIONS => SYS.DBMS_LOGMNR.NEW); END;",
        )
        .unwrap() else {
            panic!("a call")
        };
        assert_eq!(procedure, "SYS.DBMS_LOGMNR.ADD_LOGFILE");
        assert_eq!(
            args,
            [
                ("LOGFILENAME".to_owned(), Argument::Bind(":1".to_owned())),
                (
                    "OPTIONS".to_owned(),
                    Argument::Constant("SYS.DBMS_LOGMNR.NEW".to_owned())
                )
            ]
        );
        assert!(matches!(
            parse("BEGIN SYS.DBMS_LOGMNR.END_LOGMNR; END;").unwrap(),
            Statement::Call { args, .. } if args.is_empty()
        ));
        assert_eq!(
            parse("BEGIN SYS.DBMS_LOGMNR.END_LOGMNR END;")
                .unwrap_err()
                .code,
            6550
        );
        let Statement::AlterSession { parameter, value } =
            parse("ALTER SESSION SET NLS_DATE_FORMAT = 'SYYYY-MM-DD HH24:MI:SS'").unwrap()
        else {
            panic!("alter session")
        };
        assert_eq!(
            (parameter.as_str(), value.as_str()),
            ("NLS_DATE_FORMAT", "SYYYY-MM-DD HH24:MI:SS")
        );
        assert!(matches!(
            parse("ALTER SESSION SET CONTAINER = \"My Pdb\"").unwrap(),
            Statement::AlterSession { value, .. } if value == "My Pdb"
        ));
    }

    #[test]
    fn a_flashback_query_keeps_its_scn_and_binds_are_in_order_of_appearance() {
        let sql = "SELECT \"ID\" FROM \"APP\".\"T\" AS OF SCN :1 WHERE ROWID > CHARTOROWID(:2) \
                   ORDER BY ROWID FETCH FIRST :3 ROWS ONLY";
        assert!(matches!(
            parse(sql).unwrap(),
            Statement::Query {
                as_of_scn: Some(_),
                ..
            }
        ));
        assert_eq!(placeholders(sql).unwrap(), [":1", ":2", ":3"]);
        assert_eq!(parse("SELEC 1 FROM DUAL").unwrap_err().code, 900);
    }
}
