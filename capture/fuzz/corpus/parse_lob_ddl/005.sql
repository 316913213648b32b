 buf_b := HEXTORAW('0aff'); 
  dbms_lob.write(loc_b, 2, 8193, buf_b);