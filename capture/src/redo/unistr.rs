//! `UNISTR('...')` text: `\XXXX` is one UTF-16 code unit in hex (a surrogate pair is two
//! escapes), `\\` is a backslash, every other character stands for itself.

use std::borrow::Cow;

/// Decodes the (already `''`-unescaped) argument of `UNISTR`. Borrows when there is no escape.
/// `None` for a malformed escape or an unpaired surrogate.
pub(crate) fn decode(encoded: Cow<'_, str>) -> Option<Cow<'_, str>> {
    if !encoded.contains('\\') {
        return Some(encoded);
    }
    let mut decoded = String::with_capacity(encoded.len());
    let mut rest: &str = &encoded;
    while let Some(index) = rest.find('\\') {
        decoded.push_str(rest.get(..index)?);
        let after = rest.get(index + 1..)?;
        if let Some(after) = after.strip_prefix('\\') {
            decoded.push('\\');
            rest = after;
            continue;
        }
        let (unit, after) = hex_unit(after)?;
        if (0xD800..0xDC00).contains(&unit) {
            let (low, after) = hex_unit(after.strip_prefix('\\')?)?;
            if !(0xDC00..0xE000).contains(&low) {
                return None;
            }
            let code = 0x1_0000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
            decoded.push(char::from_u32(code)?);
            rest = after;
        } else {
            // A lone low surrogate is not a char: `from_u32` refuses it.
            decoded.push(char::from_u32(u32::from(unit))?);
            rest = after;
        }
    }
    decoded.push_str(rest);
    Some(Cow::Owned(decoded))
}

/// Four hex digits at the start of `text`, and what follows them.
fn hex_unit(text: &str) -> Option<(u16, &str)> {
    let digits = text.get(..4)?;
    if !digits.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return None;
    }
    let unit = u16::from_str_radix(digits, 16).ok()?;
    Some((unit, text.get(4..)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(text: &str) -> Option<String> {
        decode(Cow::Borrowed(text)).map(Cow::into_owned)
    }

    #[test]
    fn escapes_literals_and_surrogates() {
        assert_eq!(decoded(r"\0412\044B").as_deref(), Some("Вы"));
        assert_eq!(
            decoded(r"\4E2D\56FD||\6B66\6C49").as_deref(),
            Some("中国||武汉")
        );
        assert_eq!(decoded(r"a\00e9b").as_deref(), Some("aéb"));
        assert_eq!(decoded(r"\D83D\DE00!").as_deref(), Some("😀!"));
        assert_eq!(decoded(r"back\\slash").as_deref(), Some(r"back\slash"));
        assert_eq!(decoded("plain").as_deref(), Some("plain"));
    }

    #[test]
    fn malformed_escapes_are_refused() {
        for bad in [
            r"\04",
            r"\zzzz",
            r"\D83D",
            r"\D83Dx",
            r"\D83D\0041",
            r"\DE00",
            r"\",
        ] {
            assert_eq!(decoded(bad), None, "{bad}");
        }
    }
}
