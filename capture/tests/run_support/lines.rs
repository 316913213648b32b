//! Scenario lines (the simulator's JSON Lines, docs/simulator.md) for tables keyed by `ID` with
//! one number column `V`, as the snapshot tests declare them.

pub fn insert(tx: &str, table: &str, id: u64, v: u64) -> String {
    format!("{{\"tx\":\"{tx}\",\"insert\":\"APP.{table}\",\"values\":{{\"ID\":{id},\"V\":{v}}}}}\n")
}

pub fn update(tx: &str, table: &str, id: u64, v: u64) -> String {
    format!(
        "{{\"tx\":\"{tx}\",\"update\":\"APP.{table}\",\"where\":{{\"ID\":{id}}},\"set\":{{\"V\":{v}}}}}\n"
    )
}

pub fn delete(tx: &str, table: &str, id: u64) -> String {
    format!("{{\"tx\":\"{tx}\",\"delete\":\"APP.{table}\",\"where\":{{\"ID\":{id}}}}}\n")
}

pub fn commit(tx: &str) -> String {
    format!("{{\"tx\":\"{tx}\",\"commit\":true}}\n")
}

pub fn rollback(tx: &str) -> String {
    format!("{{\"tx\":\"{tx}\",\"rollback\":true}}\n")
}
