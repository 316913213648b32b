//! The Kubernetes CEL library functions the CRD's rules call, beside CEL's standard ones.
//!
//! The apiserver evaluates `x-kubernetes-validations` with cel-go plus Kubernetes' libraries
//! (`k8s.io/apiserver/pkg/cel/library`). Of those, the OracleCapture rules use only the quantity
//! library (`quantity.go`):
//!
//! | function | Kubernetes' definition | here |
//! |---|---|---|
//! | `isQuantity(string) bool` | `resource.ParseQuantity` succeeds | [`Quantity::parse`] succeeds |
//! | `quantity(string) Quantity` | `ParseQuantity`, an error when it fails | the same, an error |
//! | `<Quantity>.compareTo(Quantity) int` | `Quantity.Cmp`: -1, 0 or 1 | [`Quantity::compare`] |
//!
//! Everything else the rules use is standard CEL, which the `cel` crate implements: `has`,
//! `size`, `all`, `in`, `type(x) == int`, `string(..)`, `int(..)`, `startsWith`, `contains`
//! and `matches`. Kubernetes' regex library (`regex.go`) adds only `find` and `findAll`, which no
//! rule uses; `matches` is CEL's own, RE2 syntax in cel-go and the `regex` crate's (RE2's
//! syntax without backreferences, the same subset) here.
//!
//! One difference, on purpose: [`Quantity`] holds its digits in 128 bits, so a quantity of more
//! than 38 significant digits is "not a quantity" here while apimachinery (arbitrary precision)
//! would read it. No size of this API comes near.

use std::sync::Arc;

use cel::extractors::This;
use cel::objects::{Opaque, Value};
use cel::{Context, ExecutionError, FunctionContext};
use redoline_crds::Quantity;

/// A quantity as a CEL value (`Quantity` in Kubernetes' CEL type system).
#[derive(Debug, PartialEq, Eq)]
struct CelQuantity(Quantity);

impl Opaque for CelQuantity {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Quantity"
    }
}

/// Adds the functions to `context`. Fails only if a name were already taken by CEL's standard
/// library, which none is.
pub fn register(context: &mut Context<'_, '_>) -> Result<(), String> {
    context
        .add_function("isQuantity", is_quantity)
        .map_err(|error| format!("isQuantity: {error:?}"))?;
    context
        .add_function("quantity", quantity)
        .map_err(|error| format!("quantity: {error:?}"))?;
    context
        .add_function("compareTo", compare_to)
        .map_err(|error| format!("compareTo: {error:?}"))
}

fn is_quantity(text: Arc<String>) -> bool {
    Quantity::parse(&text).is_ok()
}

fn quantity(ftx: &FunctionContext, text: Arc<String>) -> Result<Value, ExecutionError> {
    Quantity::parse(&text)
        .map(|parsed| Value::Opaque(Arc::new(CelQuantity(parsed))))
        .map_err(|error| ftx.error(error))
}

fn compare_to(
    ftx: &FunctionContext,
    This(this): This<Value>,
    other: Value,
) -> Result<i64, ExecutionError> {
    let (left, right) = (as_quantity(ftx, &this)?, as_quantity(ftx, &other)?);
    let ordering = left
        .compare(&right)
        .ok_or_else(|| ftx.error("the quantities are too far apart to compare exactly"))?;
    Ok(ordering as i64)
}

fn as_quantity(ftx: &FunctionContext, value: &Value) -> Result<Quantity, ExecutionError> {
    match value {
        Value::Opaque(opaque) => opaque
            .downcast_ref::<CelQuantity>()
            .map(|quantity| quantity.0),
        _ => None,
    }
    .ok_or_else(|| ftx.error(format!("{value:?} is not a quantity")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expression's value, or its evaluation error as text.
    fn eval(expression: &str) -> Result<Value, String> {
        let mut context = Context::default();
        register(&mut context)?;
        let program = cel::Program::compile(expression).map_err(|error| error.to_string())?;
        program.execute(&context).map_err(|error| error.to_string())
    }

    #[test]
    fn quantities_read_and_compare_as_the_apiserver_does() {
        assert_eq!(eval("isQuantity('1.5Gi')"), Ok(Value::Bool(true)));
        assert_eq!(eval("isQuantity('lots')"), Ok(Value::Bool(false)));
        assert_eq!(eval("isQuantity('1500m')"), Ok(Value::Bool(true)));
        assert_eq!(
            eval("quantity('1.5Gi').compareTo(quantity('1536Mi'))"),
            Ok(Value::Int(0))
        );
        assert_eq!(
            eval("quantity('8Mi').compareTo(quantity('16777216'))"),
            Ok(Value::Int(-1))
        );
        assert_eq!(
            eval("quantity('1k').compareTo(quantity('1000m'))"),
            Ok(Value::Int(1))
        );
        assert!(eval("quantity('lots')").is_err());
        assert!(eval("quantity('1').compareTo(1)").is_err());
    }
}
