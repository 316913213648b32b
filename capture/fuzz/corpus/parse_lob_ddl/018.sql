
 buf_c := 'abc''d';
 DBMS_LOB.WriteAppend(TempLob, LENGTH(buf_c), buf_c);