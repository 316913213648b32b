//! The check over real directories (temporary ones), as a Secret volume would hold them.

use std::path::Path;

use super::*;

/// A `sqlnet.ora` as an Autonomous Database wallet download has it: the wallet in `?/network/admin`.
const ADB_SQLNET_ORA: &str = "WALLET_LOCATION = (SOURCE = (METHOD = file) (METHOD_DATA = (DIRECTORY=\"?/network/admin\")))\nSSL_SERVER_DN_MATCH=yes\n";
const TNSNAMES_ORA: &str = "# the service names of the download\nsales_high = (description= (retry_count=20)(address=(protocol=tcps)(port=1522)(host=adb.example.com))(connect_data=(service_name=sales_high.adb.example.com))(security=(ssl_server_dn_match=yes)))\n\nsales_low, sales_batch =\n  (description=(address=(protocol=tcps)(port=1522)(host=adb.example.com))\n    (connect_data=(service_name=sales_low.adb.example.com)))\n";

/// A directory holding `files` (name, contents).
fn wallet_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

fn sqlnet_naming(dir: &str) -> String {
    format!(
        "# the wallet is the mounted Secret\nWALLET_LOCATION =\n  (SOURCE =\n    (METHOD = FILE)\n    (METHOD_DATA =\n      (DIRECTORY = \"{dir}\")))\nSSL_SERVER_DN_MATCH = yes\n"
    )
}

/// The check as the pod runs it: TNS_ADMIN set to the directory, nothing else in the environment.
fn check_in_pod(dir: &Path, connect_string: &str) -> Result<NetConfig, NetConfigError> {
    let tns_admin = dir.display().to_string();
    let env = move |name: &str| (name == TNS_ADMIN).then(|| tns_admin.clone());
    check(dir, &env, &NetConfigDir::read(dir)?, connect_string)
}

const EZ: &str = "tcps://db.example.com:2484/sales";

#[test]
fn a_downloaded_wallet_whose_sqlnet_ora_points_at_the_oracle_home_is_named_with_the_fix() {
    let dir = wallet_dir(&[
        ("cwallet.sso", "auto-login"),
        ("ewallet.p12", "pkcs12"),
        ("sqlnet.ora", ADB_SQLNET_ORA),
        ("tnsnames.ora", TNSNAMES_ORA),
    ]);
    let error = check_in_pod(dir.path(), "sales_high").unwrap_err();
    let sqlnet = dir.path().join("sqlnet.ora");
    assert_eq!(
        error,
        NetConfigError::WalletElsewhere {
            setting: WalletSetting::SqlnetOra(sqlnet.clone()),
            directory: "?/network/admin".to_owned(),
            resolved: None,
            wallet: dir.path().to_owned(),
        }
    );
    let message = error.to_string();
    assert!(
        message.contains(&format!("WALLET_LOCATION in {}", sqlnet.display())),
        "{message}"
    );
    assert!(
        message.contains("`?` stands for the Oracle home"),
        "{message}"
    );
    let fix = error.fix();
    assert!(
        fix.contains(&format!("(DIRECTORY = \"{}\")", dir.path().display())),
        "{fix}"
    );
}

#[test]
fn the_same_wallet_with_sqlnet_ora_naming_the_mount_is_used() {
    let dir = wallet_dir(&[
        ("cwallet.sso", "auto-login"),
        ("tnsnames.ora", TNSNAMES_ORA),
    ]);
    std::fs::write(
        dir.path().join("sqlnet.ora"),
        sqlnet_naming(&dir.path().display().to_string()),
    )
    .unwrap();
    let config = check_in_pod(dir.path(), "sales_high").unwrap();
    assert_eq!(
        config.wallet,
        WalletUse::AutoLogin {
            setting: Some(WalletSetting::SqlnetOra(dir.path().join("sqlnet.ora")))
        }
    );
    let shown = config.to_string();
    assert!(
        shown.contains("(cwallet.sso, sqlnet.ora, tnsnames.ora)"),
        "{shown}"
    );
}

#[test]
fn variables_in_the_directory_are_expanded_as_oracle_net_does() {
    let dir = wallet_dir(&[("cwallet.sso", "auto-login")]);
    for directory in ["$TNS_ADMIN", "${TNS_ADMIN}/", "$TNS_ADMIN/"] {
        std::fs::write(dir.path().join("sqlnet.ora"), sqlnet_naming(directory)).unwrap();
        assert!(check_in_pod(dir.path(), EZ).is_ok(), "{directory}");
    }
    // An unset variable: the location cannot be the mount.
    std::fs::write(dir.path().join("sqlnet.ora"), sqlnet_naming("$WALLET_HOME")).unwrap();
    let error = check_in_pod(dir.path(), EZ).unwrap_err();
    assert!(
        matches!(
            error,
            NetConfigError::WalletElsewhere { resolved: None, .. }
        ),
        "{error}"
    );
    // `?` with ORACLE_HOME set is that directory.
    let tns_admin = dir.path().display().to_string();
    let env = |name: &str| match name {
        TNS_ADMIN => Some(tns_admin.clone()),
        "ORACLE_HOME" => Some("/usr/lib/oracle/23/client64/lib".to_owned()),
        _ => None,
    };
    std::fs::write(dir.path().join("sqlnet.ora"), ADB_SQLNET_ORA).unwrap();
    let error = check(
        dir.path(),
        &env,
        &NetConfigDir::read(dir.path()).unwrap(),
        EZ,
    )
    .unwrap_err();
    assert!(
        matches!(&error, NetConfigError::WalletElsewhere { resolved: Some(resolved), .. }
            if resolved == Path::new("/usr/lib/oracle/23/client64/lib/network/admin")),
        "{error}"
    );
}

#[test]
fn without_wallet_location_the_client_finds_the_wallet_in_tns_admin() {
    let dir = wallet_dir(&[
        ("cwallet.sso", "auto-login"),
        ("sqlnet.ora", "SSL_SERVER_DN_MATCH=yes\n"),
    ]);
    assert_eq!(
        check_in_pod(dir.path(), EZ).unwrap().wallet,
        WalletUse::AutoLogin { setting: None }
    );
    // The database's keystore parameter and commented-out lines are not the client's wallet.
    std::fs::write(
        dir.path().join("sqlnet.ora"),
        "ENCRYPTION_WALLET_LOCATION = (SOURCE=(METHOD=FILE)(METHOD_DATA=(DIRECTORY=/u01/tde)))\n# WALLET_LOCATION = (SOURCE=(METHOD=FILE)(METHOD_DATA=(DIRECTORY=/elsewhere)))\n",
    )
    .unwrap();
    assert_eq!(
        check_in_pod(dir.path(), EZ).unwrap().wallet,
        WalletUse::AutoLogin { setting: None }
    );
}

#[test]
fn a_wallet_without_its_auto_login_file_is_named() {
    let dir = wallet_dir(&[("ewallet.p12", "pkcs12")]);
    let error = check_in_pod(dir.path(), EZ).unwrap_err();
    assert_eq!(
        error,
        NetConfigError::NoAutoLoginWallet {
            dir: dir.path().to_owned(),
            has_pkcs12: true,
            setting: None,
        }
    );
    assert!(
        error
            .to_string()
            .contains("has no cwallet.sso (only ewallet.p12"),
        "{error}"
    );
    assert!(
        error
            .fix()
            .contains("orapki wallet create -wallet <dir> -auto_login")
    );

    // sqlnet.ora names the mount, which has no wallet at all.
    let dir = wallet_dir(&[]);
    std::fs::write(
        dir.path().join("sqlnet.ora"),
        sqlnet_naming(&dir.path().display().to_string()),
    )
    .unwrap();
    let error = check_in_pod(dir.path(), EZ).unwrap_err();
    assert!(
        matches!(
            &error,
            NetConfigError::NoAutoLoginWallet {
                has_pkcs12: false,
                setting: Some(WalletSetting::SqlnetOra(_)),
                ..
            }
        ),
        "{error}"
    );
    assert!(
        error.to_string().contains(", which WALLET_LOCATION in"),
        "{error}"
    );
}

#[test]
fn a_directory_with_no_wallet_and_no_location_leaves_tls_to_the_system_store() {
    let dir = wallet_dir(&[
        ("tnsnames.ora", TNSNAMES_ORA),
        ("sqlnet.ora", "SSL_SERVER_DN_MATCH=yes\n"),
    ]);
    let config = check_in_pod(dir.path(), "SALES_LOW").unwrap();
    assert_eq!(config.wallet, WalletUse::SystemStore);
    assert!(config.to_string().contains("system's certificate store"));
}

#[test]
fn tns_admin_must_name_the_wallet_directory() {
    let dir = wallet_dir(&[("cwallet.sso", "auto-login")]);
    let listing = NetConfigDir::read(dir.path()).unwrap();
    let unset = |_: &str| None;
    assert_eq!(
        check(dir.path(), &unset, &listing, EZ).unwrap_err(),
        NetConfigError::TnsAdmin {
            wallet: dir.path().to_owned(),
            tns_admin: None
        }
    );
    let elsewhere =
        |name: &str| (name == TNS_ADMIN).then(|| "/opt/oracle/network/admin".to_owned());
    let error = check(dir.path(), &elsewhere, &listing, EZ).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("TNS_ADMIN is /opt/oracle/network/admin, so"),
        "{error}"
    );
    assert!(
        error
            .fix()
            .starts_with(&format!("set TNS_ADMIN={}", dir.path().display()))
    );
    // The same directory written with a trailing slash.
    let slash = format!("{}/", dir.path().display());
    let trailing = |name: &str| (name == TNS_ADMIN).then(|| slash.clone());
    assert!(check(dir.path(), &trailing, &listing, EZ).is_ok());
}

#[test]
fn a_net_service_name_needs_a_tnsnames_ora() {
    let dir = wallet_dir(&[("cwallet.sso", "auto-login")]);
    let error = check_in_pod(dir.path(), "sales_high").unwrap_err();
    assert_eq!(
        error,
        NetConfigError::NoTnsnames {
            dir: dir.path().to_owned(),
            alias: "sales_high".to_owned()
        }
    );
    assert!(error.fix().contains("tcps://host:port/service"));
    // Easy Connect and descriptors are not names to look up.
    for connect_string in [
        EZ,
        "db.example.com:1521/sales",
        "(DESCRIPTION=(ADDRESS=(PROTOCOL=TCPS)(HOST=db)(PORT=2484))(CONNECT_DATA=(SERVICE_NAME=sales)))",
    ] {
        assert!(
            check_in_pod(dir.path(), connect_string).is_ok(),
            "{connect_string}"
        );
    }
}

#[test]
fn the_connect_string_wallet_location_comes_first() {
    let dir = wallet_dir(&[("cwallet.sso", "auto-login")]);
    std::fs::write(
        dir.path().join("sqlnet.ora"),
        sqlnet_naming(&dir.path().display().to_string()),
    )
    .unwrap();
    let error = check_in_pod(
        dir.path(),
        "tcps://db:2484/sales?wallet_location=/elsewhere&ssl_server_dn_match=on",
    )
    .unwrap_err();
    assert!(
        matches!(&error, NetConfigError::WalletElsewhere { setting: WalletSetting::ConnectString, directory, .. } if directory == "/elsewhere"),
        "{error}"
    );
    let mount = dir.path().display().to_string();
    let descriptor = format!(
        "(DESCRIPTION=(ADDRESS=(PROTOCOL=TCPS)(HOST=db)(PORT=2484))(CONNECT_DATA=(SERVICE_NAME=sales))(SECURITY=(MY_WALLET_DIRECTORY={mount})))"
    );
    assert_eq!(
        check_in_pod(dir.path(), &descriptor).unwrap().wallet,
        WalletUse::AutoLogin {
            setting: Some(WalletSetting::ConnectString)
        }
    );
    // A net service name stands for its tnsnames.ora entry, whose location beats sqlnet.ora's.
    std::fs::write(dir.path().join("sqlnet.ora"), ADB_SQLNET_ORA).unwrap();
    std::fs::write(
        dir.path().join("tnsnames.ora"),
        format!("{TNSNAMES_ORA}sales_tls = {descriptor}\n"),
    )
    .unwrap();
    assert!(check_in_pod(dir.path(), "SALES_TLS").is_ok());
    // Other entries of the file still follow sqlnet.ora.
    assert!(check_in_pod(dir.path(), "sales_batch").is_err());
}

#[test]
fn the_listing_skips_the_links_of_a_secret_volume_and_an_unreadable_directory_is_named() {
    let dir = wallet_dir(&[("cwallet.sso", "auto-login"), ("..data", "link")]);
    std::fs::create_dir(dir.path().join("..2026_01_01_00_00_00.000000000")).unwrap();
    let listing = NetConfigDir::read(dir.path()).unwrap();
    assert_eq!(listing.files, BTreeSet::from(["cwallet.sso".to_owned()]));
    let missing = dir.path().join("missing");
    let error = NetConfigDir::read(&missing).unwrap_err();
    assert!(
        matches!(&error, NetConfigError::Unreadable { dir, .. } if *dir == missing),
        "{error}"
    );
}
